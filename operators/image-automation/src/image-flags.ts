import { type OperatorOptions, OptionsError, type ParseContext } from '@mooring/runtime';

/** Flags only the image-automation operator has; the names match the source operator's where shared. */
export const IMAGE_FLAGS: NonNullable<ParseContext['extraFlags']> = {
  'storage-path': { type: 'string' },
  'git-backend': { type: 'string' },
};

export interface ImageOptions {
  /** Where scanned tag lists are kept (`<path>/imagerepository/<ns>/<name>/tags.txt[.gz]`). */
  storagePath: string;
  gitBackend: 'cli' | 'isomorphic';
}

/** Reads the flags (each with a `MOORING_<FLAG>` environment twin) and checks them. */
export function imageOptions(
  options: OperatorOptions,
  env: Record<string, string | undefined> = process.env,
): ImageOptions {
  const value = (name: string, fallback: string): { value: string; from: string } => {
    const v = options.extra[name];
    if (typeof v === 'string' && v !== '') return { value: v, from: `--${name}` };
    const twin = `MOORING_${name.toUpperCase().replaceAll('-', '_')}`;
    const e = env[twin];
    return e ? { value: e, from: twin } : { value: fallback, from: `--${name}` };
  };
  const backend = value('git-backend', 'cli');
  if (backend.value !== 'cli' && backend.value !== 'isomorphic') {
    throw new OptionsError(`${backend.from} must be cli or isomorphic, got ${backend.value}`);
  }
  return { storagePath: value('storage-path', '/data').value, gitBackend: backend.value };
}
