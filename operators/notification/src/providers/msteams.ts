import { objectTitle } from '../event.ts';
import { isCommitStatusUpdate, jsonPost, type PayloadBuilder } from './types.ts';

/**
 * `msteams`: a Workflows (Power Automate) webhook taking an Adaptive Card message, since Microsoft
 * retired the Office 365 connector MessageCard; the same shape Flux sends today.
 */
export const msteams: PayloadBuilder = (n, p) => {
  if (isCommitStatusUpdate(n)) return undefined;
  const e = n.event;
  const facts = Object.keys(e.metadata)
    .sort()
    .map((k) => ({ title: k, value: e.metadata[k] }));
  const body: Record<string, unknown>[] = [
    {
      type: 'TextBlock',
      text: objectTitle(e),
      weight: 'bolder',
      size: 'medium',
      wrap: true,
      color: e.severity === 'error' ? 'attention' : 'default',
    },
    { type: 'TextBlock', text: e.message, wrap: true },
  ];
  if (facts.length > 0) body.push({ type: 'FactSet', facts });
  return jsonPost(
    p.address,
    {
      type: 'message',
      attachments: [
        {
          contentType: 'application/vnd.microsoft.card.adaptive',
          content: {
            $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
            type: 'AdaptiveCard',
            version: '1.4',
            body,
          },
        },
      ],
    },
    p,
  );
};
