// A process that makes temp directories the way fetchArtifact does, prints their paths and waits to
// be killed: what a crashed operator leaves behind, for the stale-directory tests.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ownedTempPrefix } from '../src/owned-temp.ts';

const [parent, kind = 'artifact'] = process.argv.slice(2);
if (!parent) throw new Error('usage: owned-temp-child.ts <parent> [kind]');
const dir = mkdtempSync(join(parent, ownedTempPrefix(kind)));
writeFileSync(join(dir, 'file.yaml'), 'a: 1\n');
// The scratch an extraction into `dir` makes beside it before renaming it into place.
const scratch = mkdtempSync(join(dirname(dir), `.${basename(dir)}.extract-`));
writeFileSync(join(scratch, 'half.yaml'), 'b: ');
process.stdout.write(`${JSON.stringify({ dir, scratch })}\n`);
setInterval(() => {}, 60_000);
