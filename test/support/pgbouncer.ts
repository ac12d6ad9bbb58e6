// A real PgBouncer in transaction mode in front of the test PostgreSQL server: what many managed
// PostgreSQL offerings put between an application and its database. Each transaction may run on a
// different server connection, so session state (advisory locks, SET, prepared statements) does not
// carry over from one transaction to the next.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { unusedPort } from "./ports";

export interface PgBouncer {
  port: number;
  stop(): Promise<void>;
}

/** The pgbouncer executable (Debian installs it in /usr/sbin), or null. */
export function pgbouncerPath(): string | null {
  return Bun.which("pgbouncer") ?? Bun.which("pgbouncer", { PATH: "/usr/sbin:/usr/bin" });
}

/** Starts PgBouncer (pool_mode = transaction, trust auth) relaying every database to `target`. */
export async function startPgBouncer(target: { hostname: string; port: number }, opts: { poolSize?: number } = {}): Promise<PgBouncer> {
  const exe = pgbouncerPath();
  if (!exe) throw new Error("pgbouncer is not installed (apt-get install -y pgbouncer)");
  const dir = mkdtempSync(join(tmpdir(), "keyward-pgbouncer-"));
  // PgBouncer refuses to run as root: as root it runs as the postgres user, who must read the files.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) chmodSync(dir, 0o755);
  // PgBouncer needs its port named in its configuration.
  const port = unusedPort();
  const users = join(dir, "users.txt");
  writeFileSync(users, '"postgres" ""\n', { mode: 0o644 });
  const ini = join(dir, "pgbouncer.ini");
  writeFileSync(
    ini,
    [
      "[databases]",
      `* = host=${target.hostname} port=${target.port}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${users}`,
      "pool_mode = transaction",
      "max_client_conn = 1000",
      `default_pool_size = ${opts.poolSize ?? 10}`,
      "",
    ].join("\n"),
    { mode: 0o644 },
  );
  const command = asRoot ? ["runuser", "-u", "postgres", "--", exe, ini] : [exe, ini];
  const proc: Subprocess = Bun.spawn(command, { stdout: "pipe", stderr: "pipe" });
  let log = "";
  void (async () => {
    for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) log += new TextDecoder().decode(chunk);
  })();
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`pgbouncer exited (${proc.exitCode}): ${log}`);
    if (log.includes("process up")) break;
    if (Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`pgbouncer did not start within 10 s: ${log}`);
    }
    await Bun.sleep(25);
  }
  return {
    port,
    async stop() {
      if (proc.exitCode === null) proc.kill("SIGTERM");
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
