// PostgreSQL over TLS for tests: test/support/pg-tls-relay.mjs (under Node.js) in front of the test
// server, with a certificate for 127.0.0.1 signed by a test CA made here (tls-certs.ts). The CA file
// is what a node trusts through NODE_EXTRA_CA_CERTS, as an operator does for a private CA.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { makeCa, makeLeaf } from "./tls-certs";

export interface PgTlsServer {
  port: number;
  /** PEM file of the CA that signed the server certificate. */
  caFile: string;
  /** Connections that completed a TLS handshake / that started without TLS (and were closed). */
  counts(): { tls: number; plain: number };
  stop(): Promise<void>;
}

export async function startPgTlsServer(target: { hostname: string; port: number }): Promise<PgTlsServer> {
  const dir = mkdtempSync(join(tmpdir(), "keyward-pg-tls-"));
  const ca = makeCa();
  const leaf = makeLeaf({ ips: ["127.0.0.1"], issuer: ca });
  const files = { ca: join(dir, "ca.pem"), cert: join(dir, "server.pem"), key: join(dir, "server.key") };
  writeFileSync(files.ca, ca.cert);
  writeFileSync(files.cert, leaf.cert);
  writeFileSync(files.key, leaf.key, { mode: 0o600 });
  const node = Bun.which("node");
  if (!node) throw new Error("node is not on PATH");
  const proc = Bun.spawn([node, resolve(import.meta.dir, "pg-tls-relay.mjs"), target.hostname, String(target.port), files.cert, files.key], {
    stdout: "pipe",
    stderr: "inherit",
  });
  const counts = { tls: 0, plain: 0 };
  let announce: (port: number) => void = () => {};
  const listening = new Promise<number>((r) => (announce = r));
  void (async () => {
    let buffer = "";
    for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) {
      buffer += new TextDecoder().decode(chunk);
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = JSON.parse(buffer.slice(0, nl)) as { port?: number; tls?: boolean };
        buffer = buffer.slice(nl + 1);
        if (line.port) announce(line.port);
        else if (line.tls === true) counts.tls++;
        else if (line.tls === false) counts.plain++;
      }
    }
  })();
  const port = await Promise.race([listening, Bun.sleep(10_000).then(() => 0)]);
  if (!port) {
    proc.kill("SIGKILL");
    throw new Error("the TLS relay did not start within 10 s");
  }
  return {
    port,
    caFile: files.ca,
    counts: () => ({ ...counts }),
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
