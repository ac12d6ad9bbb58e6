// Reads the request/response examples of a docs/ page so a test can replay them against the real app.
// An example is a ```http block ("METHOD /api/v1/path", optional headers, optional JSON body)
// followed directly by a ```json block (the documented response).
import { readFileSync } from "node:fs";

export interface DocExample {
  method: string;
  /** Path without the /api/v1 prefix, as written (placeholders such as {id} included). */
  path: string;
  requestBody: Record<string, unknown> | null;
  response: unknown;
}

export function docExamples(file: string): DocExample[] {
  const text = readFileSync(file, "utf8");
  const out: DocExample[] = [];
  for (const m of text.matchAll(/```http\n([\s\S]*?)```\s*```json\n([\s\S]*?)```/g)) {
    const [first, ...rest] = m[1]!.trim().split("\n");
    const [method, path] = first!.split(" ") as [string, string];
    const bodyStart = rest.findIndex((l) => l.startsWith("{"));
    out.push({
      method,
      path: path.replace(/^\/api\/v1/, ""),
      requestBody: bodyStart >= 0 ? JSON.parse(rest.slice(bodyStart).join("\n")) : null,
      response: JSON.parse(m[2]!),
    });
  }
  return out;
}

/**
 * Differences between a documented JSON value and the real one, as readable paths: the same fields
 * at every level, the same JSON types, and the same values, except fields named in `random` and
 * strings the page elides with "…".
 */
export function differences(documented: unknown, real: unknown, random: ReadonlySet<string>, at = "$"): string[] {
  const type = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);
  if (type(documented) !== type(real)) return [`${at}: documented ${type(documented)}, real ${type(real)} (${JSON.stringify(real)})`];
  if (Array.isArray(documented)) {
    const r = real as unknown[];
    if (documented.length !== r.length) return [`${at}: documented ${documented.length} items, real ${r.length}`];
    return documented.flatMap((d, i) => differences(d, r[i], random, `${at}[${i}]`));
  }
  if (type(documented) === "object") {
    const d = documented as Record<string, unknown>;
    const r = real as Record<string, unknown>;
    const keys = (o: object) => Object.keys(o).sort().join(",");
    if (keys(d) !== keys(r)) return [`${at}: documented fields {${keys(d)}}, real {${keys(r)}}`];
    return Object.keys(d).flatMap((k) => differences(d[k], r[k], random, `${at}.${k}`));
  }
  const key = at.slice(at.lastIndexOf(".") + 1);
  if (random.has(key) || (typeof documented === "string" && documented.includes("…"))) return [];
  return documented === real ? [] : [`${at}: documented ${JSON.stringify(documented)}, real ${JSON.stringify(real)}`];
}
