import { CliError, EXIT_ERROR } from './cli-error.ts';
import type { ImageSource } from './install-manifests.ts';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** `--registry` and `--image-pull-secret`, checked before anything is rendered or applied. */
export function imageSource(registry: string | undefined, imagePullSecret: string | undefined): ImageSource {
  if (registry !== undefined && !/^[a-z0-9.-]+(:\d+)?(\/[a-z0-9._-]+)*\/?$/.test(registry))
    throw new CliError(
      `--registry '${registry}' is not a registry path: write host[:port]/path without a scheme, e.g. registry.example/platform.`,
      EXIT_ERROR,
    );
  if (imagePullSecret !== undefined && (imagePullSecret.length > 253 || !DNS_LABEL.test(imagePullSecret)))
    throw new CliError(
      `--image-pull-secret '${imagePullSecret}' is not a Secret name: use lowercase letters, digits and '-'.`,
      EXIT_ERROR,
    );
  return { registry, imagePullSecret };
}
