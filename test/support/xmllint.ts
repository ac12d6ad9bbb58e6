// The real `xmllint` (Debian libxml2-utils) as the independent judge of the XML we serve: a test
// that our own parser accepts our own output proves little (real-clients.md). When the binary is
// missing the checks are skipped through test/support/tools.ts, and the skip is printed, never silent.
// Declare tests that call these with `toolTest("xmllint")` (test/support/tools.ts).
const BIN = Bun.which("xmllint");

export interface XmllintResult {
  /** Well-formed and namespace-well-formed: exit 0 and no diagnostic at all. */
  ok: boolean;
  stdout: string;
  stderr: string;
}

function run(args: string[], xml: string): XmllintResult {
  if (!BIN) throw new Error("xmllint is not installed; declare the test with toolTest(\"xmllint\")");
  const p = Bun.spawnSync([BIN, "--nonet", ...args, "-"], { stdin: new TextEncoder().encode(xml), stdout: "pipe", stderr: "pipe" });
  const stdout = p.stdout.toString();
  const stderr = p.stderr.toString();
  // libxml2 reports an undeclared prefix as a "namespace error" yet exits 0: any diagnostic fails.
  return { ok: p.exitCode === 0 && stderr === "", stdout, stderr };
}

/** Parses the document (bytes as served, UTF-8) and reports every well-formedness or namespace error. */
export function xmllintCheck(xml: string): XmllintResult {
  return run(["--noout"], xml);
}

/** Evaluates an XPath 1.0 expression with xmllint (use namespace-uri() to pin namespaces). */
export function xmllintXPath(xml: string, expr: string): XmllintResult {
  return run(["--xpath", expr], xml);
}
