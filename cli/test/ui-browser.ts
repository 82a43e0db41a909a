import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

/** Debian's chromium, which the test set-up installs (hack/lib/check-prerequisites.sh). */
export const CHROMIUM = process.env.MOORING_CHROMIUM ?? '/usr/bin/chromium';

/**
 * A headless chromium with a fresh profile, closed when the test ends. A missing browser fails the
 * test with what to install: the UI's browser tests never skip.
 */
/** Headless chromium with nothing of its own going to the network: the tests' and the UI bench's. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function openBrowser(t: TestContext): Promise<{ context: BrowserContext; page: Page }> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium; npm test does it as root) or set MOORING_CHROMIUM.`,
    );
  const profile = await mkdtemp(join(tmpdir(), 'mooring-ui-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1100, height: 700 },
    args: CHROMIUM_ARGS,
  });
  t.after(async () => {
    await context.close().catch(() => undefined);
    await rm(profile, { recursive: true, force: true });
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return { context, page };
}
