// Real concurrent HTTP for race tests: every request is a separate fetch against a listening server.
export interface RaceResult {
  status: number;
  body: any;
  headers: Headers;
}

export async function postJson(baseUrl: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<RaceResult> {
  const res = await fetch(`${baseUrl}/api/v1${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

/** Starts every request before awaiting any (Promise.all over already-created promises). */
export function all<T>(n: number, make: (i: number) => Promise<T>): Promise<T[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => make(i)));
}

export function tally(results: RaceResult[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const r of results) out[r.status] = (out[r.status] ?? 0) + 1;
  return out;
}
