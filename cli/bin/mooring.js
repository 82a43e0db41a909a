#!/usr/bin/env node
// Runs the TypeScript entry through tsx's loader, so `npx mooring` needs no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
