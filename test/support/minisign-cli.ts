// Runs the real `minisign -V` (Debian package `minisign`; .ci/run installs it) on files in a temp
// directory. Missing binary → the test fails loudly rather than skipping: the acceptance criterion is
// that the real tool verifies our signatures.
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
