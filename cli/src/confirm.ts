import { createInterface } from 'node:readline/promises';
import { CliError } from './cli-error.ts';

/** Asks `question` on a terminal; without one, `--yes` is required so scripts never hang. */
export async function confirm(question: string, yes: boolean | undefined): Promise<void> {
  if (yes) return;
  if (!process.stdin.isTTY)
    throw new CliError(`${question.replace(/\?$/, '')}: refusing without confirmation, pass --yes.`);
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    if (!/^y(es)?$/i.test(answer.trim())) throw new CliError('cancelled: nothing was changed.');
  } finally {
    rl.close();
  }
}
