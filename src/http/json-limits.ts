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
// JSON text cannot carry a raw U+0000 (JSON.parse refuses control characters in strings); only the
// escape can, and it has one spelling.
const NUL_ESCAPE = "\\u0000";

/** Why a string of a body cannot be stored: an unpaired UTF-16 surrogate, or U+0000. */
export type UnstorableString = "surrogate" | "nul";

/**
 * The first string or key of a parsed body that no engine can store faithfully, with its path
 * ("identifier", "metadata.a.0"), or null.
 *
 * - An unpaired surrogate: JSON.parse accepts "\ud800" and yields a string SQLite would store as
 *   U+FFFD, so two different identifiers would collide; I-JSON (RFC 7493 §2.1) forbids them.
 * - U+0000: PostgreSQL refuses it in text (22021) and in jsonb (22P05), where SQLite stores it; the
 *   same request would be a 500 on one engine and stored on the other (and the row could not be
 *   copied to PostgreSQL later with `keyward db copy`).
 *
 * `text` is the JSON the value was parsed from: without either escape in it the walk is skipped.
 */
export function unstorableStringPath(value: unknown, text: string): { path: string; reason: UnstorableString } | null {
  const surrogate = SURROGATE_ESCAPE.test(text);
  const nul = text.includes(NUL_ESCAPE);
  if (!surrogate && !nul) return null;
  return walk(value, "", surrogate, nul);
}

function unstorable(s: string, surrogate: boolean, nul: boolean): UnstorableString | null {
  if (nul && s.includes("\u0000")) return "nul";
  if (surrogate && LONE_SURROGATE.test(s)) return "surrogate";
  return null;
}

function walk(value: unknown, path: string, surrogate: boolean, nul: boolean): { path: string; reason: UnstorableString } | null {
  if (typeof value === "string") {
    const reason = unstorable(value, surrogate, nul);
    return reason === null ? null : { path: path || "body", reason };
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = walk(value[i], path ? `${path}.${i}` : String(i), surrogate, nul);
      if (found !== null) return found;
    }
    return null;
  }
  if (value !== null && typeof value === "object") {
    for (const [key, member] of Object.entries(value)) {
      const here = path ? `${path}.${key}` : key;
      const reason = unstorable(key, surrogate, nul);
      if (reason !== null) return { path: here, reason };
      const found = walk(member, here, surrogate, nul);
      if (found !== null) return found;
    }
  }
  return null;
}
