import Mustache from 'mustache';
import type { ObjectId, SetterChange } from './setters.ts';

/** Flux's default message. */
export const DEFAULT_COMMIT_MESSAGE = 'Update from image update automation';

/** A changed file and what changed in it. */
export interface FileChange {
  /** Path relative to the repository root, with forward slashes. */
  path: string;
  changes: SetterChange[];
}

/** The template's data; see `renderCommitMessage`. */
export interface CommitMessageData {
  AutomationObject: { Name: string; Namespace: string };
  Changed: {
    Files: { Path: string; Changes: TemplateChange[] }[];
    Objects: { Kind: string; Name: string; Namespace: string; File: string; Changes: TemplateChange[] }[];
    Changes: TemplateChange[];
    /** Distinct new values, e.g. the new image references, sorted. */
    NewValues: string[];
  };
  Values: Record<string, string>;
}

interface TemplateChange {
  File: string;
  Setter: string;
  OldValue: string;
  NewValue: string;
  Kind: string;
  Name: string;
  Namespace: string;
}

/** The template is not usable as written; retrying will not help until the spec changes. */
export class InvalidTemplateError extends Error {
  override name = 'InvalidTemplateError';
}

// Go text/template actions ({{.Field}}, {{range …}}, {{ if … }}) mean a Flux template was pasted as is.
const GO_TEMPLATE = /\{\{-?\s*(\.[A-Za-z]|range\b|if\b|with\b|end\b|template\b|printf\b|\$)/;

function objectKey(o: ObjectId | undefined): string {
  return o ? `${o.kind}/${o.namespace ?? ''}/${o.name}` : '';
}

/** Builds the template data from the file changes. */
export function commitMessageData(
  automation: { name: string; namespace: string },
  files: readonly FileChange[],
  values: Record<string, string> = {},
): CommitMessageData {
  const all: TemplateChange[] = [];
  const byFile: CommitMessageData['Changed']['Files'] = [];
  const byObject = new Map<string, CommitMessageData['Changed']['Objects'][number]>();
  for (const file of [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    const changes = file.changes.map((c) => ({
      File: file.path,
      Setter: c.setter,
      OldValue: c.oldValue,
      NewValue: c.newValue,
      Kind: c.object?.kind ?? '',
      Name: c.object?.name ?? '',
      Namespace: c.object?.namespace ?? '',
    }));
    byFile.push({ Path: file.path, Changes: changes });
    all.push(...changes);
    file.changes.forEach((c, i) => {
      if (!c.object) return;
      const key = `${file.path}\0${objectKey(c.object)}`;
      let entry = byObject.get(key);
      if (!entry) {
        entry = {
          Kind: c.object.kind,
          Name: c.object.name,
          Namespace: c.object.namespace ?? '',
          File: file.path,
          Changes: [],
        };
        byObject.set(key, entry);
      }
      entry.Changes.push(changes[i]!);
    });
  }
  return {
    AutomationObject: { Name: automation.name, Namespace: automation.namespace },
    Changed: {
      Files: byFile,
      Objects: [...byObject.values()],
      Changes: all,
      NewValues: [...new Set(all.map((c) => c.NewValue))].sort(),
    },
    Values: values,
  };
}

/**
 * Renders `git.commit.messageTemplate` with Mustache (logic-less, so a template cannot run code).
 * Data: `AutomationObject.{Name,Namespace}`; `Changed.Files[] {Path, Changes[]}`;
 * `Changed.Objects[] {Kind, Name, Namespace, File, Changes[]}`; `Changed.Changes[]` and every
 * `Changes[]` entry `{File, Setter, OldValue, NewValue, Kind, Name, Namespace}`;
 * `Changed.NewValues[]` (strings, `{{.}}`); `Values` (messageTemplateValues). Nothing is HTML-escaped.
 * Example: `{{#Changed.Changes}}- {{File}}: {{OldValue}} -> {{NewValue}}\n{{/Changed.Changes}}`.
 */
export function renderCommitMessage(template: string | undefined, data: CommitMessageData): string {
  if (template === undefined || template.trim() === '') return DEFAULT_COMMIT_MESSAGE;
  if (GO_TEMPLATE.test(template)) {
    throw new InvalidTemplateError(
      'git.commit.messageTemplate uses Go template syntax; Mooring templates are Mustache, e.g. {{AutomationObject.Name}} and {{#Changed.Changes}}…{{/Changed.Changes}}',
    );
  }
  let message: string;
  try {
    message = Mustache.render(template, data, undefined, { escape: (v: unknown) => String(v) });
  } catch (err) {
    throw new InvalidTemplateError(
      `git.commit.messageTemplate is not a valid template: ${(err as Error).message}`,
    );
  }
  return message.trim() === '' ? DEFAULT_COMMIT_MESSAGE : message;
}
