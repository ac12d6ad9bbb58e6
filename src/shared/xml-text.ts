// Characters that XML 1.0 does not allow anywhere in a document, not even escaped as `&#1;`
// (XML 1.0 §2.2 `Char`): C0 controls other than TAB, LF and CR, and the noncharacters U+FFFE/U+FFFF.
// One of them in feed.xml makes the whole appcast unparseable, and Sparkle and WinSparkle then fail
// every update check of the product (update-formats.md §1.1). Lone surrogates are not listed: they
// cannot be encoded in UTF-8 and leave as U+FFFD, which is legal.
//
// Two uses: the wire schemas of every admin text field that reaches a feed refuse them (pattern
// below), and the feed renderers strip them from whatever is stored (`stripXmlIllegal`), so data
// written before the check, or by a path that skips it, still cannot break a feed.

const CLASS = "\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\uFFFE\\uFFFF";

/** JSON Schema (ECMA-262) pattern: a string with none of the XML-illegal characters. */
export const XML_TEXT_PATTERN = `^[^${CLASS}]*$`;

const ILLEGAL = new RegExp(`[${CLASS}]`, "g");

/** `s` without the XML-illegal characters. */
export function stripXmlIllegal(s: string): string {
  return s.replace(ILLEGAL, "");
}

/** A deep copy of a JSON-like value with every string passed through `stripXmlIllegal`. */
export function stripXmlIllegalDeep<T>(value: T): T {
  if (typeof value === "string") return stripXmlIllegal(value) as T;
  if (Array.isArray(value)) return value.map(stripXmlIllegalDeep) as T;
  if (value !== null && typeof value === "object" && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = stripXmlIllegalDeep(v);
    return out as T;
  }
  return value;
}
