import { alertmanager } from './alertmanager.ts';
import { bitbucket } from './bitbucket.ts';
import { discord } from './discord.ts';
import { generic } from './generic.ts';
import { genericHmac } from './generic-hmac.ts';
import { gitea } from './gitea.ts';
import { github } from './github.ts';
import { gitlab } from './gitlab.ts';
import { googlechat } from './googlechat.ts';
import { grafana } from './grafana.ts';
import { matrix } from './matrix.ts';
import { msteams } from './msteams.ts';
import { opsgenie } from './opsgenie.ts';
import { pagerduty } from './pagerduty.ts';
import { rocket } from './rocket.ts';
import { slack } from './slack.ts';
import { telegram } from './telegram.ts';
import type { PayloadBuilder } from './types.ts';
import { webex } from './webex.ts';

/** Payload builders by Provider type; a type missing here is reported on the Provider as unsupported. */
export const PAYLOAD_BUILDERS: Readonly<Record<string, PayloadBuilder>> = {
  generic,
  'generic-hmac': genericHmac,
  slack,
  msteams,
  discord,
  googlechat,
  webex,
  telegram,
  matrix,
  rocket,
  alertmanager,
  grafana,
  pagerduty,
  opsgenie,
  github,
  gitlab,
  gitea,
  bitbucket,
};

/** Types whose address has a built-in default, so the Provider may leave it empty. */
export const DEFAULT_ADDRESS_TYPES: ReadonlySet<string> = new Set(['telegram', 'pagerduty']);

/** Types that need the secret's `token`. */
export const TOKEN_TYPES: ReadonlySet<string> = new Set([
  'generic-hmac',
  'telegram',
  'opsgenie',
  'github',
  'gitlab',
  'gitea',
  'bitbucket',
  'webex',
  'matrix',
]);

/** Types that need `spec.channel` (room, chat or routing key). */
export const CHANNEL_TYPES: ReadonlySet<string> = new Set(['telegram', 'matrix', 'webex', 'pagerduty']);
