import { KustomizeError } from '../errors.ts';
import { isObject } from '../res-id.ts';
import type { JsonValue, Resource } from '../resource.ts';
import { type FieldRef, type FieldSpec, IMAGES_FIELD_SPECS, walkFieldSpec } from './field-specs.ts';

/** One `images:` entry of a kustomization. */
export interface ImageOverride {
  /** Matched as a regular expression against the image name, as kustomize does. */
  name: string;
  newName?: string;
  newTag?: string;
  digest?: string;
}

/** Rewrites matching container images (name, tag, digest) in every resource except CRDs. */
export function setImages(
  resources: Resource[],
  images: ImageOverride[],
  fieldSpecs: FieldSpec[] = IMAGES_FIELD_SPECS,
): void {
  for (const image of images) {
    const matcher = imageMatcher(image.name);
    const update = (ref: FieldRef): void => {
      const value = ref.value;
      if (value === null) return;
      if (typeof value !== 'string') throw new KustomizeError('an image field must hold a string');
      if (!matcher.test(value)) return;
      ref.set(rewriteImage(value, image));
    };
    for (const resource of resources) {
      if (resource.object.kind === 'CustomResourceDefinition') continue;
      // kustomize runs two passes: any `containers`/`initContainers` list anywhere, then the field specs.
      walkContainers(resource.object, update);
      for (const spec of fieldSpecs) walkFieldSpec(resource.object, spec, update);
    }
  }
}

function imageMatcher(name: string): RegExp {
  try {
    // kustomize compiles the entry name as a regular expression, unescaped.
    return new RegExp(`^${name}(:[a-zA-Z0-9_.{}-]*)?(@sha256:[a-zA-Z0-9_.{}-]*)?$`);
  } catch {
    throw new KustomizeError(`Image name '${name}' in images is not a valid regular expression.`);
  }
}

/** Splits `[host[:port]/]path[:tag][@digest]` into its parts (kustomize's image.Split). */
export function splitImage(image: string): { name: string; tag: string; digest: string } {
  const slash = image.indexOf('/');
  const offset = Math.max(slash, 0);
  const search = slash > 0 ? image.slice(slash) : image;
  const at = search.indexOf('@');
  const colon = search.indexOf(':');
  if (colon < 0 && at < 0) return { name: image, tag: '', digest: '' };
  if (at >= 0 && (at < colon || colon < 0)) {
    return { name: image.slice(0, at + offset), tag: '', digest: image.slice(at + offset + 1) };
  }
  if (at >= 0 && colon >= 0) {
    return {
      name: image.slice(0, colon + offset),
      tag: image.slice(colon + offset + 1, at + offset),
      digest: image.slice(at + offset + 1),
    };
  }
  return { name: image.slice(0, colon + offset), tag: image.slice(colon + offset + 1), digest: '' };
}

/** Applies one override to an image string that matched it. */
export function rewriteImage(value: string, image: ImageOverride): string {
  let { name, tag, digest } = splitImage(value);
  if (image.newName) name = image.newName;
  // A new tag or digest replaces both the old tag and the old digest.
  if (image.newTag && image.digest) {
    tag = image.newTag;
    digest = image.digest;
  } else if (image.newTag) {
    tag = image.newTag;
    digest = '';
  } else if (image.digest) {
    tag = '';
    digest = image.digest;
  }
  return `${name}${tag ? `:${tag}` : ''}${digest ? `@${digest}` : ''}`;
}

function walkContainers(node: JsonValue, update: (ref: FieldRef) => void): void {
  if (Array.isArray(node)) {
    for (const item of node) walkContainers(item, update);
    return;
  }
  if (!isObject(node)) return;
  for (const [key, value] of Object.entries(node)) {
    walkContainers(value, update);
    if ((key === 'containers' || key === 'initContainers') && Array.isArray(value)) {
      for (const container of value) {
        if (!isObject(container) || !Object.hasOwn(container, 'image')) continue;
        update({
          get value() {
            return container.image ?? null;
          },
          set(next) {
            container.image = next;
          },
        });
      }
    }
  }
}
