import { IMAGE_API_VERSION, KUSTOMIZE_API_VERSION, SOURCE_API_VERSION } from '@mooring/api';

/** API version of each kind an Alert can watch or a Receiver can trigger, when a reference names none. */
export const KIND_API_VERSIONS: Readonly<Record<string, string>> = {
  GitRepository: SOURCE_API_VERSION,
  OCIRepository: SOURCE_API_VERSION,
  Kustomization: KUSTOMIZE_API_VERSION,
  ImageRepository: IMAGE_API_VERSION,
  ImagePolicy: IMAGE_API_VERSION,
  ImageUpdateAutomation: IMAGE_API_VERSION,
};
