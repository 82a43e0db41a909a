import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  commitMessageData,
  DEFAULT_COMMIT_MESSAGE,
  InvalidTemplateError,
  renderCommitMessage,
} from './commit-message.ts';

const DATA = commitMessageData(
  { name: 'auto', namespace: 'apps' },
  [
    {
      path: 'deploy/web.yaml',
      changes: [
        {
          setter: 'apps:web',
          oldValue: 'r/web:1.0.0',
          newValue: 'r/web:1.1.0',
          object: { kind: 'Deployment', name: 'web', namespace: 'apps' },
        },
        {
          setter: 'apps:web:tag',
          oldValue: '1.0.0',
          newValue: '1.1.0',
          object: { kind: 'Deployment', name: 'web', namespace: 'apps' },
        },
      ],
    },
    { path: 'a.yaml', changes: [{ setter: 'apps:api', oldValue: 'r/api:1', newValue: 'r/api:2' }] },
  ],
  { env: 'prod' },
);

test('renders files, objects, changes, values and the automation, without HTML escaping', () => {
  const template = [
    '[{{Values.env}}] {{AutomationObject.Namespace}}/{{AutomationObject.Name}}: {{#Changed.NewValues}}{{.}} {{/Changed.NewValues}}',
    '{{#Changed.Files}}file {{Path}}\n{{/Changed.Files}}',
    '{{#Changed.Objects}}{{Kind}} {{Namespace}}/{{Name}} in {{File}}\n{{#Changes}}  {{OldValue}} -> {{NewValue}} ({{Setter}})\n{{/Changes}}{{/Changed.Objects}}',
    '<&>',
  ].join('\n');
  assert.equal(
    renderCommitMessage(template, DATA),
    // A line holding only a section tag leaves no blank line behind (Mustache's standalone rule).
    '[prod] apps/auto: 1.1.0 r/api:2 r/web:1.1.0 \nfile a.yaml\nfile deploy/web.yaml\n' +
      'Deployment apps/web in deploy/web.yaml\n  r/web:1.0.0 -> r/web:1.1.0 (apps:web)\n  1.0.0 -> 1.1.0 (apps:web:tag)\n<&>',
  );
});

test('no template or an empty result gives the default message', () => {
  assert.equal(renderCommitMessage(undefined, DATA), DEFAULT_COMMIT_MESSAGE);
  assert.equal(renderCommitMessage('{{Values.missing}}', DATA), DEFAULT_COMMIT_MESSAGE);
});

test('a Go text/template or a broken template is refused with a clear error', () => {
  assert.throws(
    () => renderCommitMessage('{{range .Changed.Changes}}x{{end}}', DATA),
    (e: Error) => e instanceof InvalidTemplateError && /Go template syntax/.test(e.message),
  );
  assert.throws(() => renderCommitMessage('{{#Changed.Files}}unclosed', DATA), InvalidTemplateError);
});

test('the example in the README renders one line per change', () => {
  const template =
    'Automated update by {{AutomationObject.Name}}\n\n{{#Changed.Changes}}\n- {{File}}: {{OldValue}} -> {{NewValue}}\n{{/Changed.Changes}}\n';
  assert.equal(
    renderCommitMessage(template, DATA),
    'Automated update by auto\n\n- a.yaml: r/api:1 -> r/api:2\n- deploy/web.yaml: r/web:1.0.0 -> r/web:1.1.0\n- deploy/web.yaml: 1.0.0 -> 1.1.0\n',
  );
});
