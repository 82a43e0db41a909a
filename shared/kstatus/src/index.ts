export { ALWAYS_CURRENT_KINDS } from './always-current.ts';
export { computeStatus } from './compute-status.ts';
export { SCHEDULE_WINDOW_MS } from './pod.ts';
export type { KStatus, LiveObject, StatusResult } from './result.ts';
export type {
  AppliedHealth,
  Blocker,
  ChainLookup,
  ChainObject,
  HealthLookup,
  ObjectRef,
  WhyBlocked,
} from './why-blocked.ts';
export { chainLines, idOf, PRUNE_BUDGET_EXCEEDED, whyBlocked } from './why-blocked.ts';
