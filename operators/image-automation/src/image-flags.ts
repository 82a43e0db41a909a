import { type FlagTable, flagChecks, type OperatorOptions } from '@mooring/runtime';

/**
 * Flags only the image-automation operator has; the names, twins and defaults match the source
 * operator's where both have a flag, so one command line fits the all-in-one process.
 */
export const IMAGE_FLAGS = {
  'storage-path': {
    type: 'string',
    default: '/data',
    help: 'Directory the scanned tag lists are kept in (`imagerepository/<namespace>/<name>/`).',
  },
  'git-backend': {
    type: 'string',
    default: 'cli',
    help: 'How Git is spoken: `cli` (the git command) or `isomorphic` (in-process isomorphic-git).',
    check: flagChecks.oneOf('cli', 'isomorphic'),
  },
} satisfies FlagTable;

export interface ImageOptions {
  /** Where scanned tag lists are kept (`<path>/imagerepository/<ns>/<name>/tags.txt[.gz]`). */
  storagePath: string;
  gitBackend: 'cli' | 'isomorphic';
}

/** The image-automation flags, typed; `parseOperatorOptions` has resolved and checked them already. */
export function imageOptions(options: OperatorOptions): ImageOptions {
  const text = (name: keyof typeof IMAGE_FLAGS): string => {
    const v = options.extra[name];
    return typeof v === 'string' ? v : IMAGE_FLAGS[name].default;
  };
  return { storagePath: text('storage-path'), gitBackend: text('git-backend') as ImageOptions['gitBackend'] };
}
