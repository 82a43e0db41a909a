/** A build failure the user can act on: says which file or resource and what is wrong. */
export class KustomizeError extends Error {
  override name = 'KustomizeError';
}
