/** The `rel="next"` target of a Link header. */
export function nextLink(link: string | string[] | undefined): string | undefined {
  if (!link) return undefined;
  const text = Array.isArray(link) ? link.join(', ') : link;
  // RFC 8288: `<url>; rel="next"`, possibly among other links; the URL itself may hold commas.
  for (const m of text.matchAll(/<([^>]*)>((?:\s*;\s*[^;,<]*)*)/g)) {
    const rel = /(?:^|;)\s*rel\s*=\s*(?:"([^"]*)"|([^\s;"]+))/i.exec(m[2] ?? '');
    const values = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/);
    if (values.includes('next')) return m[1];
  }
  return undefined;
}
