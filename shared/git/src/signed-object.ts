import type { CommitInfo, SignedPayload } from './git-client.ts';

/** Splits a raw commit object into its `gpgsig` header and the commit without it (what was signed). */
export function commitSignature(raw: string): SignedPayload | undefined {
  const headerEnd = raw.indexOf('\n\n');
  const headers = headerEnd < 0 ? raw : raw.slice(0, headerEnd + 1);
  const lines = headers.split('\n');
  const start = lines.findIndex((l) => l.startsWith('gpgsig '));
  if (start < 0) return undefined;
  let end = start + 1;
  while (end < lines.length && lines[end]!.startsWith(' ')) end++;
  const sigLines = [
    lines[start]!.slice('gpgsig '.length),
    ...lines.slice(start + 1, end).map((l) => l.slice(1)),
  ];
  const kept = [...lines.slice(0, start), ...lines.slice(end)].join('\n');
  const payload = kept + (headerEnd < 0 ? '' : raw.slice(headerEnd + 1));
  return { signature: `${sigLines.join('\n')}\n`, payload };
}

const SIG_MARKERS = ['-----BEGIN PGP SIGNATURE-----', '-----BEGIN SSH SIGNATURE-----'];

/** Splits a raw annotated tag object into the signature appended to its message and the tag without it. */
export function tagSignature(raw: string): SignedPayload | undefined {
  let at = -1;
  for (const marker of SIG_MARKERS) {
    const i = raw.lastIndexOf(`\n${marker}`);
    if (i > at) at = i;
  }
  if (at < 0) return undefined;
  return { signature: raw.slice(at + 1), payload: raw.slice(0, at + 1) };
}

/** Inserts a gpgsig header into a raw (unsigned) commit object, as `git commit -S` lays it out. */
export function withCommitSignature(raw: string, armoredSignature: string): string {
  const headerEnd = raw.indexOf('\n\n');
  const sig = armoredSignature.trimEnd().split('\n').join('\n ');
  return `${raw.slice(0, headerEnd)}\ngpgsig ${sig}${raw.slice(headerEnd)}`;
}

/** Signs `payload` with an armored OpenPGP private key; resolves to a detached armored signature. */
export async function signPayload(payload: string, armoredKey: string, passphrase?: string): Promise<string> {
  // openpgp (0.8 MB) is loaded when a commit is signed, not with the operator.
  const openpgp = await import('openpgp');
  let key = await openpgp.readPrivateKey({ armoredKey });
  if (!key.isDecrypted()) {
    if (!passphrase) throw new Error('The commit signing key is encrypted and no passphrase was given.');
    key = await openpgp.decryptKey({ privateKey: key, passphrase });
  }
  const message = await openpgp.createMessage({ binary: Buffer.from(payload, 'utf8') });
  return openpgp.sign({ message, signingKeys: key, detached: true, format: 'armored' });
}

/** Reads subject and author of a raw commit object. */
export function commitInfo(commit: string, raw: string): CommitInfo {
  const headerEnd = raw.indexOf('\n\n');
  const headers = raw.slice(0, headerEnd < 0 ? raw.length : headerEnd).split('\n');
  const authorLine = headers.find((l) => l.startsWith('author ')) ?? 'author  <> 0 +0000';
  const m = /^author (.*) <([^>]*)> (\d+) ([+-]\d{4})$/.exec(authorLine);
  const seconds = m ? Number(m[3]) : 0;
  const message = headerEnd < 0 ? '' : raw.slice(headerEnd + 2);
  return {
    commit,
    subject: message.split('\n')[0] ?? '',
    author: { name: m?.[1] ?? '', email: m?.[2] ?? '', date: new Date(seconds * 1000).toISOString() },
  };
}
