// Shape limits for JSON request bodies, checked on the text before JSON.parse. A 120 KB body of
// 20,000 nested objects took seconds to refuse (validation and its error report walk the nesting
// recursively, blocking the event loop) and 50,000 levels overflowed the stack (a 500). A linear
// scan that stops at the first excess makes the refusal cost proportional to the limit, not the body.

/** Deepest nesting of objects and arrays a body may have. The deepest route schema needs 3. */
export const MAX_JSON_DEPTH = 32;
/** Most values a body may hold: each object and array counts one, and so does each member after a comma. */
export const MAX_JSON_NODES = 10_000;

export type JsonShapeViolation = "depth" | "nodes";

/**
 * Scans JSON text for nesting deeper than `maxDepth` or more than `maxNodes` values, tracking string
 * state so brackets and commas inside strings do not count. Malformed text is not diagnosed here
 * (JSON.parse does that next); the scan only bounds what JSON.parse and validation will be given.
 */
export function jsonShapeViolation(text: string, maxDepth = MAX_JSON_DEPTH, maxNodes = MAX_JSON_NODES): JsonShapeViolation | null {
  // Exceeding either limit takes more characters than the shorter limit: short bodies (every SDK
  // call) skip the scan.
  if (text.length <= Math.min(maxDepth, maxNodes)) return null;
  let depth = 0;
  let nodes = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
      continue;
    }
    switch (c) {
      case 0x22: // "
        inString = true;
        break;
      case 0x7b: // {
      case 0x5b: // [
        if (++depth > maxDepth) return "depth";
        if (++nodes > maxNodes) return "nodes";
        break;
      case 0x7d: // }
      case 0x5d: // ]
        depth--;
        break;
      case 0x2c: // ,
        if (++nodes > maxNodes) return "nodes";
        break;
    }
  }
  return null;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
// Text decoded as strict UTF-8 holds no lone surrogate; only a \uD800–\uDFFF escape can make one.
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * The path ("identifier", "metadata.a.0") of the first string or key holding an unpaired UTF-16
 * surrogate, or null. JSON.parse accepts "\ud800" and yields a string SQLite would store as U+FFFD,
 * so two different identifiers would collide; I-JSON (RFC 7493 §2.1) forbids them. `text` is the
 * JSON the value was parsed from: without a surrogate escape in it the walk is skipped.
 */
export function loneSurrogatePath(value: unknown, text: string): string | null {
  if (!SURROGATE_ESCAPE.test(text)) return null;
  return walk(value, "");
}

function walk(value: unknown, path: string): string | null {
  if (typeof value === "string") return LONE_SURROGATE.test(value) ? path || "body" : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = walk(value[i], path ? `${path}.${i}` : String(i));
      if (found !== null) return found;
    }
    return null;
  }
  if (value !== null && typeof value === "object") {
    for (const [key, member] of Object.entries(value)) {
      const here = path ? `${path}.${key}` : key;
      if (LONE_SURROGATE.test(key)) return here;
      const found = walk(member, here);
      if (found !== null) return found;
    }
  }
  return null;
}
