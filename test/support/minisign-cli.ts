// Runs the real `minisign -V` (Debian package `minisign`; .ci/run installs it) on files in a temp
// directory. Tests that call it are declared with toolTest("minisign") (test/support/tools.ts): on a
// machine without minisign they skip with one visible line, and under KEYWARD_REQUIRE_TOOLS=1 (CI)
// they fail. Called anyway without the tool, it throws rather than report a verification result.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface MinisignResult {
  ok: boolean;
  exitCode: number;
  output: string;
}

export async function minisignVerify(input: {
  publicKeyFile: string;
  message: Uint8Array | string;
  signatureFile: string;
  filename?: string;
}): Promise<MinisignResult> {
  if (!Bun.which("minisign")) throw new Error("the minisign command is not installed (apt-get install -y minisign)");
  const dir = mkdtempSync(join(tmpdir(), "keyward-minisign-"));
  try {
    const file = join(dir, input.filename ?? "artifact.bin");
    writeFileSync(join(dir, "key.pub"), input.publicKeyFile);
    writeFileSync(file, input.message);
    writeFileSync(`${file}.minisig`, input.signatureFile);
    // -H: accept only prehashed signatures, the form Keyward writes.
    const proc = Bun.spawn(["minisign", "-V", "-H", "-p", join(dir, "key.pub"), "-m", file, "-x", `${file}.minisig`], {
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    const output = stdout + stderr;
    return { ok: exitCode === 0 && output.includes("Signature and comment signature verified"), exitCode, output };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
