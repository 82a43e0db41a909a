import { type Step, step } from '@mooring/runtime';
import type { ImageRepositoryRun } from '../../image-repository-run.ts';
import { checkScanDue, readStoredTags } from './check-scan-due.ts';
import { listTags, recordScan, scanStep, storeTags } from './scan.ts';
import { validateSpec } from './validate-spec.ts';

/**
 * An ImageRepository's reconcile; docs/architecture.md lists the same steps. The scan steps run
 * only when a scan is due.
 */
export const IMAGE_REPOSITORY_STEPS: readonly Step<ImageRepositoryRun>[] = [
  step('validate spec', validateSpec),
  step('read stored tags', readStoredTags),
  step('check scan due', checkScanDue),
  scanStep('list tags', listTags),
  scanStep('store tags', storeTags),
  scanStep('record scan', recordScan),
];
