import { type FlagTable, flagChecks, type OperatorOptions, parseDuration } from '@mooring/runtime';

/**
 * Flags only the source operator has, with Flux's names and defaults; parsed and checked with
 * the shared flags (a bad value stops the process before anything connects).
 */
export const SOURCE_FLAGS = {
  'storage-path': {
    type: 'string',
    default: '/data',
    help: 'Directory the artifacts are kept in.',
  },
  'storage-addr': {
    type: 'string',
    default: ':9090',
    help: 'Address the read-only artifact server listens on.',
    check: flagChecks.listenAddress,
  },
  'storage-adv-addr': {
    type: 'string',
    help: 'Host (and port) written into artifact URLs, as consumers reach the artifact server.',
    shown: '`localhost:<bound port>`',
    check: flagChecks.hostPort,
  },
  'artifact-retention-records': {
    type: 'string',
    default: '2',
    help: 'Artifacts kept per object, the current one included.',
    check: flagChecks.wholeNumber(1),
  },
  'artifact-retention-ttl': {
    type: 'string',
    default: '60s',
    help: 'How long an artifact that is no longer current survives.',
    check: flagChecks.duration(0),
  },
  'git-backend': {
    type: 'string',
    default: 'cli',
    help: 'How Git is spoken: `cli` (the git command) or `isomorphic` (in-process isomorphic-git).',
    check: flagChecks.oneOf('cli', 'isomorphic'),
  },
} satisfies FlagTable;

export interface SourceOptions {
  /** Where artifacts are stored. */
  storagePath: string;
  /** Where the artifact server listens. */
  storageAddr: string;
  /** The host[:port] written into artifact URLs, as consumers reach the server. */
  storageAdvAddr: string | undefined;
  retentionRecords: number;
  retentionTtlMs: number;
  gitBackend: 'cli' | 'isomorphic';
}

/** The source flags, typed; `parseOperatorOptions` has resolved and checked them already. */
export function sourceOptions(options: OperatorOptions): SourceOptions {
  const value = (name: keyof typeof SOURCE_FLAGS): string | undefined => {
    const v = options.extra[name];
    return typeof v === 'string' ? v : undefined;
  };
  const text = (name: keyof typeof SOURCE_FLAGS): string =>
    value(name) ?? (SOURCE_FLAGS[name] as { default?: string }).default ?? '';
  return {
    storagePath: text('storage-path'),
    storageAddr: text('storage-addr'),
    storageAdvAddr: value('storage-adv-addr'),
    retentionRecords: Number(text('artifact-retention-records')),
    retentionTtlMs: parseDuration(text('artifact-retention-ttl')),
    gitBackend: text('git-backend') as SourceOptions['gitBackend'],
  };
}
