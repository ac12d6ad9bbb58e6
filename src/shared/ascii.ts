/**
 * Lower-cases A-Z only: how SQLite's lower() and LIKE fold case, and PostgreSQL's lower() under
 * COLLATE "C" (the repositories use it so both engines match alike). A search term folded with
 * String#toLowerCase instead (which also folds "É" to "é") could never match the stored text it was
 * compared with: searching "ÉMILE" did not find "ÉMILE@example.com".
 */
export function asciiLower(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}
