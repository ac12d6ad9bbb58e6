import { describe, expect, test } from "bun:test";
import { XML_TEXT_PATTERN, stripXmlIllegal, stripXmlIllegalDeep } from "./xml-text";

/** XML 1.0 §2.2: Char ::= #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF] */
const isXmlChar = (c: number) => c === 0x9 || c === 0xa || c === 0xd || (c >= 0x20 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd) || c >= 0x10000;

describe("XML-illegal characters", () => {
  const pattern = new RegExp(XML_TEXT_PATTERN);

  test("the pattern and the stripper agree with XML 1.0 Char on every BMP code point but surrogates", () => {
    const wrong: string[] = [];
    for (let c = 0; c <= 0xffff; c++) {
      if (c >= 0xd800 && c <= 0xdfff) continue; // not characters; UTF-8 encoding turns a lone one into U+FFFD
      const s = `a${String.fromCharCode(c)}b`;
      const legal = isXmlChar(c);
      if (pattern.test(s) !== legal || (stripXmlIllegal(s) === s) !== legal) wrong.push(c.toString(16));
      if (!legal && stripXmlIllegal(s) !== "ab") wrong.push(c.toString(16));
    }
    expect(wrong).toEqual([]);
  });

  test("astral characters and surrogate pairs are kept", () => {
    expect(pattern.test("😀")).toBe(true);
    expect(stripXmlIllegal("a😀\u0000b")).toBe("a😀b");
  });

  test("deep: every string in arrays and objects, other values untouched", () => {
    expect(stripXmlIllegalDeep({ a: "x\u0001", b: [1, "y\uFFFF", null, { c: "\u000Bz" }], d: true })).toEqual({
      a: "x",
      b: [1, "y", null, { c: "z" }],
      d: true,
    });
  });
});
