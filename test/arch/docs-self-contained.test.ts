// Keeps the user documentation self-contained: README.md, ARCHITECTURE.md, docs/*.md, .env.example and the served
// OpenAPI document state their rules instead of citing design notes that are not in the repository
// ("spec design rule 4", "DECISIONS rule 8"), and every relative link points at a file (and heading)
// that exists.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createTestApp } from "../support/app";

const ROOT = join(import.meta.dir, "../..");
setDefaultTimeout(30_000); // quick alone; a loaded 2-core machine can stretch even file reads past 5 s
const PAGES = ["README.md", "ARCHITECTURE.md", ".env.example", ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
const read = (p: string) => readFileSync(join(ROOT, p), "utf8");

// Citations of documents that live outside the repository.
const CITATIONS: RegExp[] = [
  /\bDECISIONS\b/,
  /\bspec(?:ification)?(?:'s)?\b[^.]{0,30}?\brules?\s+\d/i, // "spec design rule 4", "spec: API key rule 2"
  /\(spec\b/i, // "(spec: …)"
  /\bthe spec\b/i,
  /\bshared\/(?:spec|design|reference)\b/,
];

function citations(text: string): string[] {
  // Fenced code is quoted material (commands, payloads), not prose.
  const prose = text.replace(/```[\s\S]*?```/g, "");
  return CITATIONS.flatMap((re) => [...prose.matchAll(new RegExp(re.source, re.flags + "g"))].map((m) => m[0]));
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes. */
function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  for (const m of markdown.replace(/```[\s\S]*?```/g, "").matchAll(/^#{1,6} (.+)$/gm)) {
    out.add(
      m[1]!
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, "")
        .replace(/ /g, "-"),
    );
  }
  // An explicit anchor (<a id="…"></a>) on a list item or paragraph, as GitHub renders it.
  for (const m of markdown.matchAll(/<a id="([^"]+)"><\/a>/g)) out.add(m[1]!);
  return out;
}

describe("user documentation is self-contained", () => {
  test("the pages exist (sanity)", () => {
    expect(PAGES).toEqual(expect.arrayContaining(["README.md", "docs/integration.md", "docs/security.md", "docs/products.md"]));
  });

  test("no page cites the design notes or the spec by rule number: the rule itself is written out", () => {
    const found = PAGES.map((p) => ({ page: p, citations: citations(read(p)) })).filter((x) => x.citations.length > 0);
    expect(found).toEqual([]);
  });

  test("every relative link points at a file of the repository, and an anchor at a heading of it", () => {
    const broken: string[] = [];
    for (const page of PAGES.filter((p) => p.endsWith(".md"))) {
      const text = read(page).replace(/```[\s\S]*?```/g, "");
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
        const [file, anchor] = target.split("#") as [string, string | undefined];
        const path = file === "" ? page : join(dirname(page), file);
        if (!existsSync(join(ROOT, path))) {
          broken.push(`${page}: ${target} (no file ${path})`);
          continue;
        }
        if (anchor !== undefined && path.endsWith(".md") && !anchors(read(path)).has(anchor)) {
          broken.push(`${page}: ${target} (no heading #${anchor} in ${path})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  test("the served OpenAPI document cites no design note or spec rule either", async () => {
    const t = await createTestApp();
    try {
      const doc = (await t.request("GET", "/api/v1/openapi.json")).text;
      expect(citations(doc)).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
