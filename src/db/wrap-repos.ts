// Wraps every method of every repository of a set, once at boot: the SQLite gate
// (transaction.sqlite.ts) and the transaction scope's guard (transaction-scope.ts) both put a check
// in front of each call. Members that are not functions are kept as they are.
export type RepoMethod = (...args: unknown[]) => unknown;

/** `wrap(method, repo, repoName, methodName)` returns what replaces the method; it calls `method.apply(repo, args)`. */
export function wrapRepoMethods<R extends object>(repos: R, wrap: (method: RepoMethod, repo: object, repoName: string, methodName: string) => RepoMethod): R {
  const out: Record<string, unknown> = {};
  for (const [repoName, repo] of Object.entries(repos)) {
    if (typeof repo !== "object" || repo === null) {
      out[repoName] = repo;
      continue;
    }
    const wrapped: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(repo)) wrapped[name] = typeof value === "function" ? wrap(value as RepoMethod, repo, repoName, name) : value;
    out[repoName] = wrapped;
  }
  return out as R;
}
