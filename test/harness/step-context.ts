// The ReconcileContext an operator's step unit tests hand to one step, in place of the controller's:
// conditions set on the status at the test's clock, events recorded, a silent logger, progress not
// saved (a test that needs saves overrides saveProgress), deadlines as plain timeouts.
import {
  type MooringStatus,
  type ReconcileContext,
  type RuntimeLogger,
  setCondition,
} from '@mooring/runtime';

export interface RecordedEvent {
  severity: 'info' | 'error';
  reason: string;
  message: string;
  metadata?: Record<string, string>;
}

export const quietLogger: RuntimeLogger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child: () => quietLogger,
};

/** A context over `status` (written in place) whose events land in the returned list. */
export function stepContext(
  status: MooringStatus,
  now: () => number,
): { ctx: ReconcileContext; events: RecordedEvent[] } {
  const events: RecordedEvent[] = [];
  const ctx: ReconcileContext = {
    status,
    setCondition: (type, s, reason, message) => {
      status.conditions = setCondition(
        status.conditions,
        { type, status: s, reason, message },
        new Date(now()),
      );
    },
    event: (severity, reason, message, metadata) =>
      events.push({ severity, reason, message, ...(metadata && { metadata }) }),
    log: quietLogger,
    signal: new AbortController().signal,
    deadline: (ms) => AbortSignal.timeout(ms),
    now: () => new Date(now()),
    saveProgress: async () => {},
  };
  return { ctx, events };
}
