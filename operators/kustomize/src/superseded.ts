// Latest revision wins: a reconcile waiting on health checks for an older source revision or
// generation is cancelled as soon as the watch sees a newer one, so the fix that was just pushed
// does not queue behind the broken revision's timeout.

/** Why a reconcile in flight was given up: what arrived while it ran. */
export class Superseded extends Error {
  override name = 'Superseded';
}

/** What a reconcile works on, for comparing with what the watch reports. */
export interface RunSubject {
  generation: number | undefined;
  /** The source (or chart) revision once the reconcile has resolved it. */
  revision(): string | undefined;
}

/** What arrived: a new generation of the object, or a new artifact revision of its source. */
export interface News {
  generation?: number;
  revision?: string;
}

/** One reconcile in flight; `end` when it returns. */
export interface InFlightRun {
  readonly signal: AbortSignal;
  end(): void;
}

/** Whether `news` is newer than what `subject` reconciles; the sentence says what arrived. */
export function supersedes(subject: RunSubject, news: News): string | undefined {
  if (
    news.generation !== undefined &&
    subject.generation !== undefined &&
    news.generation > subject.generation
  )
    return `generation ${news.generation}`;
  const current = subject.revision();
  // Not resolved yet: the reconcile will read the newest revision itself.
  if (news.revision !== undefined && current !== undefined && news.revision !== current)
    return `revision '${news.revision}'`;
  return undefined;
}

/**
 * The reconciles in flight of one reconciler, by object key. The watches report news; a run whose
 * subject it supersedes is aborted with a Superseded reason, and the key, enqueued by the same
 * watch event, is reconciled again as soon as the run returns.
 */
export class RunsInFlight {
  readonly #runs = new Map<string, { subject: RunSubject; ctl: AbortController }>();

  begin(key: string, subject: RunSubject): InFlightRun {
    const ctl = new AbortController();
    const entry = { subject, ctl };
    this.#runs.set(key, entry);
    return {
      signal: ctl.signal,
      end: () => {
        if (this.#runs.get(key) === entry) this.#runs.delete(key);
      },
    };
  }

  /** Aborts the run of `key` if `news` is newer than what it reconciles. */
  supersede(key: string, news: News): void {
    const run = this.#runs.get(key);
    if (!run || run.ctl.signal.aborted) return;
    const what = supersedes(run.subject, news);
    if (what) run.ctl.abort(new Superseded(what));
  }
}
