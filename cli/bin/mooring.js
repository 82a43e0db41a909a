#!/usr/bin/env node
// Starts the CLI from its bundle (cli/.bundle, built by bundle.js on first use and whenever a
// source file changed), and through tsx's loader when the bundle cannot be built, e.g. in a
// read-only checkout. MOORING_CLI_NO_BUNDLE=1 always takes the tsx path.
import { pathToFileURL } from 'node:url';
import { BUNDLE, buildBundle, bundleIsFresh } from './bundle.js';

async function startFromBundle() {
  if (process.env.MOORING_CLI_NO_BUNDLE === '1') return false;
  if (!bundleIsFresh()) {
    try {
      await buildBundle();
    } catch {
      return false;
    }
  }
  await import(pathToFileURL(BUNDLE).href);
  return true;
}

if (!(await startFromBundle())) {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/main.ts');
}
