// U+0000 in a request URL (%00 in its path or query string) is refused before any route sees it.
// Decoded into a path parameter or a query value, it reaches the database as a lookup or a filter:
// PostgreSQL refuses U+0000 in text (22021), so the same request was a 500 there and an ordinary
// answer on SQLite. No Keyward address holds U+0000, so the refusal names where it was found and
// nothing else. JSON bodies get the same rule from the body parser (json-limits.ts).
import { errorResponse } from "./error-handler";

const NUL = "%00";

/** The 400 VALIDATION_ERROR for a request whose URL holds %00, or undefined. */
export function urlNulRefusal(request: Request): Response | undefined {
  const url = request.url;
  const at = url.indexOf(NUL);
  if (at < 0) return undefined;
  const query = url.indexOf("?");
  const field = query < 0 || at < query ? "path" : queryFieldOf(url.slice(query + 1));
  return errorResponse(request, "VALIDATION_ERROR", "The request URL cannot contain U+0000 (%00).", {
    fields: { [field]: "contains U+0000 (%00)" },
  });
}

/** The name of the first query parameter whose name or value holds %00 ("query" when the name itself cannot be shown). */
function queryFieldOf(search: string): string {
  for (const pair of search.split("&")) {
    if (!pair.includes(NUL)) continue;
    const raw = pair.split("=", 1)[0]!;
    if (raw.includes(NUL)) return "query";
    try {
      return decodeURIComponent(raw.replaceAll("+", " ")) || "query";
    } catch {
      return "query";
    }
  }
  return "query";
}
