// Audit `changes` in one shape for every catalog and license mutation (COMMON rule 9):
// { before, after } holding only the fields that changed, in their wire form (snake_case, RFC 3339),
// so an audit row reads like the API that caused it. Creation has before = null, deletion after = null.
// Lives with plans because plans are the lowest layer of the catalog/licenses modules that use it.
export type Wire = Record<string, unknown>;
export interface Changes {
  before: Wire | null;
  after: Wire | null;
  [extra: string]: unknown;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export function diffChanges(before: Wire, after: Wire): Changes {
  const b: Wire = {};
  const a: Wire = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (same(before[key], after[key])) continue;
    b[key] = before[key] ?? null;
    a[key] = after[key] ?? null;
  }
  return { before: b, after: a };
}

export const createdChanges = (after: Wire): Changes => ({ before: null, after });
export const deletedChanges = (before: Wire): Changes => ({ before, after: null });
