import type { ObjectRow } from './object-row.ts';

// Its own module, with no run-time imports, because the page uses it too: the graph view decides
// with it whether a change could bring a new object into a filtered graph.

/** What the overview's and the graph's search word is looked for in: the row's key, message and revision. */
export function rowMatchesSearch(row: ObjectRow, search: string | undefined): boolean {
  const word = search?.trim().toLowerCase();
  return (
    !word ||
    `${row.kind}/${row.namespace}/${row.name} ${row.message} ${row.revision}`.toLowerCase().includes(word)
  );
}
