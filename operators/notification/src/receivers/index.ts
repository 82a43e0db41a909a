import { bitbucket } from './bitbucket.ts';
import { cdevents } from './cdevents.ts';
import { generic } from './generic.ts';
import { genericHmac } from './generic-hmac.ts';
import { github } from './github.ts';
import { gitlab } from './gitlab.ts';
import { harbor } from './harbor.ts';
import { nexus } from './nexus.ts';
import { unsignedJson } from './registry-hooks.ts';
import type { Verifier } from './types.ts';

/** Verifiers by Receiver type; a type missing here is reported on the Receiver as unsupported. */
export const VERIFIERS: Readonly<Record<string, Verifier>> = {
  generic,
  'generic-hmac': genericHmac,
  github,
  // Gitea and Forgejo sign like GitHub; the API's type enum does not list `gitea` yet.
  gitea: github,
  gitlab,
  bitbucket,
  harbor,
  dockerhub: unsignedJson,
  quay: unsignedJson,
  nexus,
  cdevents,
};
