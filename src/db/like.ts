/** Escapes LIKE wildcards (`%`, `_`) and the escape character itself, for `LIKE … ESCAPE '\'`. */
export const likeEscape = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);
