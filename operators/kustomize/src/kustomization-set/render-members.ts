import { createHash } from 'node:crypto';
import type { KustomizationTemplate } from '@mooring/api';
import type { Element } from './generators.ts';
import { KUSTOMIZATION_MEMBER, type MemberKind } from './member-kinds.ts';
import { renderString, renderValue, TemplateError } from './template.ts';

/** One object (of the template's kind) the set wants, rendered from the template for one element. */
export interface RenderedMember {
  /** The element's name in status: its cluster's, else the Kustomization's. */
  name: string;
  /** Name of the generated object. */
  kustomization: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  spec: Record<string, unknown>;
  /** sha256 of what was rendered, first 16 hex: a parameter change is a new revision too. */
  revision: string;
  element: Element;
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

function stringMap(value: unknown, what: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries((value as Record<string, unknown>) ?? {})) {
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean')
      throw new TemplateError(`${what} ${k} must render to a string`);
    out[k] = String(v);
  }
  return out;
}

/** Renders the template for every element; any element that does not render fails them all. */
export function renderMembers(
  template: KustomizationTemplate,
  elements: readonly Element[],
  kind: MemberKind = KUSTOMIZATION_MEMBER,
): RenderedMember[] {
  const seen = new Map<string, number>();
  return elements.map((element, i) => {
    const where = `element ${i + 1}`;
    try {
      const name = String(renderString(template.metadata.name, element.params));
      if (!DNS_SUBDOMAIN.test(name))
        throw new TemplateError(`name ${JSON.stringify(name)} is not a valid Kubernetes name`);
      const earlier = seen.get(name);
      if (earlier !== undefined)
        throw new TemplateError(
          `name ${name} is also element ${earlier}'s: the name template must use a parameter that differs`,
        );
      seen.set(name, i + 1);
      const labels = stringMap(renderValue(template.metadata.labels ?? {}, element.params), 'label');
      const annotations = stringMap(
        renderValue(template.metadata.annotations ?? {}, element.params),
        'annotation',
      );
      const spec = renderValue(template.spec, element.params);
      const invalid = kind.specError(spec);
      if (invalid) throw new TemplateError(`the rendered spec is not a valid ${kind.kind} spec: ${invalid}`);
      const revision = createHash('sha256')
        .update(JSON.stringify({ labels, annotations, spec }))
        .digest('hex')
        .slice(0, 16);
      const cluster = (element.params.cluster as { name?: unknown } | undefined)?.name;
      return {
        name: typeof cluster === 'string' ? cluster : name,
        kustomization: name,
        labels,
        annotations,
        spec: spec as Record<string, unknown>,
        revision,
        element,
      };
    } catch (err) {
      throw new TemplateError(`${where}: ${(err as Error).message}`);
    }
  });
}
