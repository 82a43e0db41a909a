import { basicAuth } from './basic-auth.ts';
import { jsonPost, type PayloadBuilder } from './types.ts';

/** Flux's header naming the operator that emitted the event; receivers of Flux webhooks read it. */
export const COMPONENT_HEADER = 'gotk-component';

/** `generic`: the event JSON itself, with the emitting component in a header (Flux's generic webhook). */
export const generic: PayloadBuilder = (n, p) =>
  jsonPost(p.address, n.event, p, { [COMPONENT_HEADER]: n.event.reportingController, ...basicAuth(p) });
