import { type OperatorOptions, OptionsError, type ParseContext, parseDuration } from '@mooring/runtime';

/** Flags only the source operator has, with Flux's names and defaults. */
export const SOURCE_FLAGS: NonNullable<ParseContext['extraFlags']> = {
  'storage-path': { type: 'string' },
  'storage-addr': { type: 'string' },
  'storage-adv-addr': { type: 'string' },
  'artifact-retention-records': { type: 'string' },
  'artifact-retention-ttl': { type: 'string' },
  'git-backend': { type: 'string' },
};

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

const DEFAULTS = {
  'storage-path': '/data',
  'storage-addr': ':9090',
  'artifact-retention-records': '2',
  'artifact-retention-ttl': '60s',
  'git-backend': 'cli',
};

/** Reads the source flags (each with a `MOORING_<FLAG>` environment twin) and checks them. */
export function sourceOptions(
  options: OperatorOptions,
  env: Record<string, string | undefined> = process.env,
): SourceOptions {
  const value = (name: keyof typeof SOURCE_FLAGS): { value: string; from: string } | undefined => {
    const v = options.extra[name];
    if (typeof v === 'string' && v !== '') return { value: v, from: `--${name}` };
    const twin = `MOORING_${name.toUpperCase().replaceAll('-', '_')}`;
    const e = env[twin];
    if (e) return { value: e, from: twin };
    const d = (DEFAULTS as Record<string, string>)[name];
    return d === undefined ? undefined : { value: d, from: `--${name}` };
  };
  const records = value('artifact-retention-records')!;
  if (!/^[1-9][0-9]*$/.test(records.value)) {
    throw new OptionsError(`${records.from} must be a whole number of at least 1, got ${records.value}`);
  }
  const ttl = value('artifact-retention-ttl')!;
  let retentionTtlMs: number;
  try {
    retentionTtlMs = parseDuration(ttl.value);
  } catch (err) {
    throw new OptionsError(`${ttl.from}: ${(err as Error).message}`);
  }
  const backend = value('git-backend')!;
  if (backend.value !== 'cli' && backend.value !== 'isomorphic') {
    throw new OptionsError(`${backend.from} must be cli or isomorphic, got ${backend.value}`);
  }
  return {
    storagePath: value('storage-path')!.value,
    storageAddr: value('storage-addr')!.value,
    storageAdvAddr: value('storage-adv-addr')?.value,
    retentionRecords: Number(records.value),
    retentionTtlMs,
    gitBackend: backend.value,
  };
}
