// JSON read back from a database column, in one key order on both engines. PostgreSQL's jsonb keeps
// objects in its own order (shorter keys first), SQLite's JSON text keeps the order they were
// written in; presenting either with keys sorted byte-wise makes the wire output identical.
export function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== "object" || value instanceof Date) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    out[key] = sortedKeys((value as Record<string, unknown>)[key]);
  }
  return out;
}
