// The ReconcileContext a source kind's step unit tests hand to one step: conditions set on the
// status at the fake clock's time, events recorded, a silent logger, progress not saved.
import {
  type MooringStatus,
  type ReconcileContext,
  type RuntimeLogger,
  setCondition,
} from '@mooring/runtime';

export interface RecordedEvent {
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
    event: (_severity, reason, message, metadata) => events.push({ reason, message, metadata }),
    log: quietLogger,
    signal: new AbortController().signal,
    deadline: (ms) => AbortSignal.timeout(ms),
    now: () => new Date(now()),
    saveProgress: async () => {},
  };
  return { ctx, events };
}
