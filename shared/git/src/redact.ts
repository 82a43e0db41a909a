import type { GitAuth } from './git-client.ts';

/** Returns the URL without a password (and without any user name on http/https), for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (!u.username && !u.password) return url;
    if (u.protocol === 'ssh:') u.password = '';
    else {
      u.username = '';
      u.password = '';
    }
    return u.toString();
  } catch {
    // Not a parseable URL: drop anything that looks like userinfo.
    return url.replace(/\/\/[^/@\s]*@/g, '//');
  }
}

/** The literal strings that must never appear in an error: passwords, tokens, keys and their encodings. */
export function secretsOf(auth: GitAuth | undefined, url?: string): string[] {
  const out: string[] = [];
  if (auth?.password) out.push(auth.password, encodeURIComponent(auth.password));
  if (auth?.bearerToken) out.push(auth.bearerToken);
  if (auth?.username !== undefined && auth.password !== undefined)
    out.push(Buffer.from(`${auth.username}:${auth.password}`).toString('base64'));
  if (auth?.sshIdentity) out.push(...auth.sshIdentity.split('\n').filter((l) => l.trim().length > 16));
  if (url) {
    try {
      const u = new URL(url);
      if (u.password) out.push(u.password, decodeURIComponent(u.password));
    } catch {
      // unparseable URLs are redacted by pattern in redactText
    }
  }
  // Very short strings would blank out ordinary words; they cannot be matched reliably anyway.
  return [...new Set(out.filter((s) => s.length >= 3))];
}

/** Removes credentials in URLs and every known secret from free text such as git's stderr. */
export function redactText(text: string, secrets: string[]): string {
  let out = text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s'"]*@/gi, (_m, scheme: string) => `${scheme}`);
  for (const s of secrets) out = out.split(s).join('***');
  return out;
}
