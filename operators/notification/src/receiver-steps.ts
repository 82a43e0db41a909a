import type { Receiver } from '@mooring/api';
import {
  type KubeClient,
  type ReconcileContext,
  RetryableError,
  StalledError,
  type Step,
  step,
} from '@mooring/runtime';
import { receiverProblem } from './receiver-spec.ts';
import { readSecret, SecretError } from './secrets.ts';
import { webhookPath } from './webhook-path.ts';

/** One reconcile of one Receiver: what its steps read and what each adds for the next. */
export interface ReceiverRun {
  readonly obj: Receiver;
  readonly ctx: ReconcileContext;
  readonly client: Pick<KubeClient, 'get'>;
  readonly noCrossNamespaceRefs: boolean;
  readonly namespace: string;
  readonly name: string;
  /** How messages name the Receiver: `Receiver <namespace>/<name>`. */
  readonly id: string;
  /** The token from `spec.secretRef`. */
  token?: string;
  /** The webhook path published in the status. */
  path?: string;
}

/** The type and its fields make a Receiver that can work (receiverProblem); Stalled ValidationFailed otherwise. */
export function validateSpec(run: ReceiverRun): undefined {
  const problem = receiverProblem(run.obj, { noCrossNamespaceRefs: run.noCrossNamespaceRefs });
  if (problem) throw new StalledError('ValidationFailed', `${run.id}: ${problem}`);
  return undefined;
}

/** The `token` key of the Secret `spec.secretRef` names; Retryable TokenNotFound while it is missing. */
export async function readToken(run: ReceiverRun): Promise<undefined> {
  const { id, namespace } = run;
  const secretName = run.obj.spec.secretRef?.name ?? '';
  let token: string | undefined;
  try {
    token = (await readSecret(run.client, namespace, secretName)).token;
  } catch (err) {
    if (err instanceof SecretError) throw new RetryableError('TokenNotFound', `${id}: ${err.message}`);
    throw err;
  }
  if (!token)
    throw new RetryableError('TokenNotFound', `${id}: Secret ${namespace}/${secretName} has no 'token' key`);
  run.token = token;
  return undefined;
}

/** `status.webhookPath`, derived from the token, the name and the namespace. */
export function publishPath(run: ReceiverRun): undefined {
  if (run.token === undefined) throw new Error('internal: the token is not set; a step ran out of order');
  run.path = webhookPath(run.token, run.name, run.namespace);
  run.ctx.status.webhookPath = run.path;
  return undefined;
}

/** A Receiver's reconcile; docs/architecture.md lists the same steps. */
export const RECEIVER_STEPS: readonly Step<ReceiverRun>[] = [
  step('validate spec', validateSpec),
  step('read token', readToken),
  step('publish webhook path', publishPath),
];
