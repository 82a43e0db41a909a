import { objectTitle } from '../event.ts';
import { isCommitStatusUpdate, jsonPost, type PayloadBuilder } from './types.ts';

/** `googlechat`: an incoming webhook with a card (header, message, one key/value widget per metadata key). */
export const googlechat: PayloadBuilder = (n, p) => {
  if (isCommitStatusUpdate(n)) return undefined;
  const e = n.event;
  const widgets = Object.keys(e.metadata)
    .sort()
    .map((k) => ({ decoratedText: { topLabel: k, text: e.metadata[k] } }));
  const sections: Record<string, unknown>[] = [{ widgets: [{ textParagraph: { text: e.message } }] }];
  if (widgets.length > 0) sections.push({ widgets });
  return jsonPost(
    p.address,
    {
      cardsV2: [
        {
          cardId: `${e.involvedObject.kind}-${e.involvedObject.namespace}-${e.involvedObject.name}`,
          card: { header: { title: objectTitle(e), subtitle: e.reportingController }, sections },
        },
      ],
    },
    p,
  );
};
