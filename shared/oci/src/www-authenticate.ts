/** One challenge from a WWW-Authenticate header: the scheme (lowercase) and its parameters. */
export interface AuthChallenge {
  scheme: string;
  params: Record<string, string>;
}

/**
 * Parses a WWW-Authenticate header (RFC 7235), which may hold several comma-separated challenges,
 * e.g. `Bearer realm="https://auth.example/token",service="reg",scope="repository:a:pull"`.
 * Hand-written: the grammar is small and no maintained npm parser handles multiple challenges.
 */
export function parseWwwAuthenticate(header: string): AuthChallenge[] {
  const challenges: AuthChallenge[] = [];
  let i = 0;
  const n = header.length;
  const skip = (chars: string): void => {
    while (i < n && chars.includes(header[i] as string)) i++;
  };
  const token = (): string => {
    const start = i;
    while (i < n && !' \t,="'.includes(header[i] as string)) i++;
    return header.slice(start, i);
  };
  let current: AuthChallenge | undefined;
  while (i < n) {
    skip(' \t,');
    if (i >= n) break;
    const start = i;
    const word = token();
    if (word.length === 0) {
      i++; // stray character: skip rather than loop forever
      continue;
    }
    skip(' \t');
    if (header[i] === '=' && current) {
      i++;
      skip(' \t');
      let value = '';
      if (header[i] === '"') {
        i++;
        while (i < n && header[i] !== '"') {
          if (header[i] === '\\' && i + 1 < n) i++;
          value += header[i];
          i++;
        }
        i++; // closing quote
      } else {
        value = token();
      }
      current.params[word.toLowerCase()] = value;
    } else if (header[i] === '=' && !current) {
      // A parameter before any scheme: malformed; ignore it.
      i++;
      token();
    } else {
      i = start + word.length;
      current = { scheme: word.toLowerCase(), params: {} };
      challenges.push(current);
    }
  }
  return challenges;
}
