// The real entry point as a child process: first start with no configuration, restart, bad config,
// a port in use, and (PostgreSQL) a database that is not up yet or does not exist.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { freshPgDatabase, pgTestUrl } from "../support/pg";
import { startRelay } from "../support/tcp-relay";
import { startPgTlsServer } from "../support/pg-tls";
import { removeTempDirs, runKeyward, startKeyward, tempDir } from "./support";
import { unusedPort } from "../support/ports";

afterAll(removeTempDirs);

async function pubkey(url: string): Promise<string> {
  const res = await fetch(`${url}/api/v1/license/pubkey`);
  expect(res.status).toBe(200);
  const body = (await res.json()) as { data: { public_key: string } };
  return body.data.public_key;
}

describe("first start", () => {
  test("works with no configuration: ./data is created, a 0600 master key generated, pubkey served, and it survives a restart", async () => {
    // No DATA_DIR, no master key, no NODE_ENV: only PORT=0 so parallel runs never collide.
    const cwd = tempDir();
    const first = await startKeyward({ cwd });
    let key1: string;
    try {
      const health = await fetch(`${first.url}/api/v1/health`);
      expect(health.status).toBe(200);
      key1 = await pubkey(first.url);
      expect(key1).toMatch(/^[0-9a-f]{64}$/);
    } finally {
      expect(await first.stop()).toBe(0);
    }
    const masterKey = join(cwd, "data", "master.key");
    expect(existsSync(masterKey)).toBe(true);
    expect(statSync(masterKey).mode & 0o777).toBe(0o600);
    expect(existsSync(join(cwd, "data", "keyward.db"))).toBe(true);
    // The operator is told the key was generated (DECISIONS: Keys and secrets).
    expect(first.output().stdout).toContain("generated a master key");

    const second = await startKeyward({ cwd });
    try {
      expect(await pubkey(second.url)).toBe(key1);
      expect(second.output().stdout).not.toContain("generated a master key");
    } finally {
      expect(await second.stop()).toBe(0);
    }
  });

  test("LICENSE_SIGNING_KEY pins the token key: the pubkey is the one derived from that seed", async () => {
    // RFC 8032 §7.1 TEST 1 seed and public key.
    const running = await startKeyward({
      env: {
        DATA_DIR: tempDir(),
        LICENSE_SIGNING_KEY: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
      },
    });
    try {
      expect(await pubkey(running.url)).toBe("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
    } finally {
      expect(await running.stop()).toBe(0);
    }
  });
});

describe("a bad configuration stops the boot with a message naming the variable", () => {
  const cases: [string, Record<string, string>, string][] = [
    ["PORT=abc", { PORT: "abc" }, "PORT"],
    ["PORT out of range", { PORT: "70000" }, "PORT"],
    ["BF_MAX_FAILS=-1", { BF_MAX_FAILS: "-1" }, "BF_MAX_FAILS"],
    ["STORAGE_DRIVER=ftp", { STORAGE_DRIVER: "ftp" }, "STORAGE_DRIVER"],
    ["s3 without a bucket", { STORAGE_DRIVER: "s3" }, "STORAGE_BUCKET"],
    ["RELEASE_KEY_ENCRYPTION_KEY too short", { RELEASE_KEY_ENCRYPTION_KEY: "abcd" }, "RELEASE_KEY_ENCRYPTION_KEY"],
    ["TRUST_PROXY=maybe", { TRUST_PROXY: "maybe" }, "TRUST_PROXY"],
    ["BASE_URL not a URL", { BASE_URL: "ftp://x" }, "BASE_URL"],
    ["production without a master key", { NODE_ENV: "production", BASE_URL: "https://licenses.example.com" }, "RELEASE_KEY_ENCRYPTION_KEY"],
    [
      "production with an http BASE_URL",
      { NODE_ENV: "production", RELEASE_KEY_ENCRYPTION_KEY: "ab".repeat(32), BASE_URL: "http://licenses.example.com" },
      "BASE_URL",
    ],
  ];
  for (const [name, env, variable] of cases) {
    test(name, () => {
      const dataDir = tempDir();
      const r = runKeyward(["serve"], { env: { DATA_DIR: dataDir, PORT: "0", ...env } });
      expect(r.exitCode).not.toBe(0);
      expect(r.exitCode).not.toBeNull();
      expect(r.stderr).toContain(`Invalid configuration: ${variable} `);
      expect(r.stdout).not.toContain("keyward listening");
      // Nothing was generated on the way to the refusal.
      expect(existsSync(join(dataDir, "master.key"))).toBe(false);
    });
  }
});

describe("a master key that is not the database's", () => {
  test("serve and one-shot commands stop with one line naming where the key came from, not a decryption error or a stack", async () => {
    const dataDir = join(tempDir(), "data");
    const keyOf = (byte: string) => byte.repeat(64);
    const first = await startKeyward({ env: { DATA_DIR: dataDir, RELEASE_KEY_ENCRYPTION_KEY: keyOf("a") } });
    const before = await pubkey(first.url);
    expect(await first.stop()).toBe(0);

    const env = { HOST: "127.0.0.1", PORT: "0", DATA_DIR: dataDir, LOG_LEVEL: "info", RELEASE_KEY_ENCRYPTION_KEY: keyOf("b") };
    const serve = runKeyward(["serve"], { env });
    expect(serve.exitCode).toBe(1);
    const lines = (serve.stdout + serve.stderr).trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: "error", masterKey: "RELEASE_KEY_ENCRYPTION_KEY", file: join(dataDir, "keyward.db") });
    expect(String(lines[0]!.msg)).toContain("the master key is not the one this database was sealed with");
    expect(String(lines[0]!.error)).toContain("does not open the token-signing key");

    const oneShot = runKeyward(["api-key", "create", "--scopes", "admin", "--name", "x"], { env });
    expect(oneShot.exitCode).toBe(1);
    expect(oneShot.stderr.trim().split("\n")).toHaveLength(1);
    expect(oneShot.stderr).toContain("the master key is not the one this database was sealed with");
    for (const out of [serve.stdout + serve.stderr, oneShot.stdout + oneShot.stderr]) {
      expect(out).not.toContain(keyOf("b"));
      expect(out).not.toContain("    at ");
      expect(out).not.toContain("unable to authenticate");
    }

    // With LICENSE_SIGNING_KEY pinned as well: refused before the pinned key is sealed under the
    // wrong master key, so the deployment's own key still opens everything afterwards.
    const seed = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
    const pinned = runKeyward(["serve"], { env: { ...env, LICENSE_SIGNING_KEY: seed } });
    expect(pinned.exitCode).toBe(1);
    expect(pinned.stdout + pinned.stderr).toContain("the master key is not the one this database was sealed with");
    const again = await startKeyward({ env: { DATA_DIR: dataDir, RELEASE_KEY_ENCRYPTION_KEY: keyOf("a") } });
    try {
      expect(await pubkey(again.url)).toBe(before);
    } finally {
      expect(await again.stop()).toBe(0);
    }
  });
});

describe("a port already in use", () => {
  test("stops the second instance with a message naming the address, instead of sharing the port", async () => {
    const first = await startKeyward({ env: { DATA_DIR: join(tempDir(), "data") } });
    try {
      const second = runKeyward(["serve"], {
        env: { HOST: "127.0.0.1", PORT: String(first.port), DATA_DIR: join(tempDir(), "data"), LOG_LEVEL: "info" },
      });
      expect(second.exitCode).not.toBe(0);
      expect(second.stdout + second.stderr).toContain("cannot listen");
      expect(second.stdout + second.stderr).toContain(String(first.port));
    } finally {
      expect(await first.stop()).toBe(0);
    }
  });
});

describe.skipIf(!pgTestUrl())("a database that is not there yet, or not at all (PostgreSQL)", () => {
  test("a node started while its database is unreachable waits for it, logging each retry, and serves once it answers", async () => {
    const database = await freshPgDatabase("boot_wait");
    const url = new URL(database.url);
    // Between the node and PostgreSQL, a relay that first closes every connection it accepts.
    const relay = await startRelay({ hostname: url.hostname, port: Number(url.port || 5432) });
    relay.cut();
    url.hostname = "127.0.0.1";
    url.port = String(relay.port);
    const comesUp = setTimeout(() => relay.restore(), 1_500);
    try {
      const node = await startKeyward({ env: { DATA_DIR: join(tempDir(), "data"), DATABASE_URL: url.toString() } });
      try {
        const retries = node
          .output()
          .stdout.split("\n")
          .filter((l) => l.includes("database unavailable at start; retrying"));
        expect(retries.length).toBeGreaterThan(0);
        expect(JSON.parse(retries[0]!)).toMatchObject({ level: "warn", host: `127.0.0.1:${relay.port}`, code: "CONNECTION_CLOSED" });
        expect((await fetch(`${node.url}/api/v1/health`)).status).toBe(200);
      } finally {
        expect(await node.stop()).toBe(0);
      }
    } finally {
      clearTimeout(comesUp);
      relay.stop();
      await database.drop();
    }
  }, 30_000);

  test("a failover host list: the node starts on the second host when the first refuses, and moves to it when the first goes away", async () => {
    const database = await freshPgDatabase("boot_hosts");
    const url = new URL(database.url);
    const target = { hostname: url.hostname, port: Number(url.port || 5432) };
    const [first, second] = [await startRelay(target), await startRelay(target)];
    // A port with nothing listening: connections to it are refused.
    const refusing = unusedPort();
    const withHosts = (hosts: number[]) => `postgres://${url.username}@${hosts.map((p) => `127.0.0.1:${p}`).join(",")}${url.pathname}?target_session_attrs=read-write`;
    const health = async (base: string) => (await fetch(`${base}/api/v1/health`)).status;
    try {
      const dataDir = join(tempDir(), "data");
      const onSecond = await startKeyward({ env: { DATA_DIR: dataDir, DATABASE_URL: withHosts([refusing, second.port]) } });
      try {
        expect(await health(onSecond.url)).toBe(200);
        expect(second.relayed).toBeGreaterThan(0);
      } finally {
        expect(await onSecond.stop()).toBe(0);
      }

      const node = await startKeyward({ env: { DATA_DIR: dataDir, DATABASE_URL: withHosts([first.port, second.port]) } });
      try {
        expect(await health(node.url)).toBe(200);
        const before = second.relayed;
        // The first host goes away: its connections reset, new ones closed at once.
        first.cut();
        const deadline = Date.now() + 10_000;
        let status = 0;
        while (Date.now() < deadline && (status = await health(node.url)) !== 200) await Bun.sleep(100);
        expect(status).toBe(200);
        // Several requests in a row, all answered, through the second host.
        for (let i = 0; i < 20; i++) expect(await health(node.url)).toBe(200);
        expect(second.relayed).toBeGreaterThan(before);
        expect(node.output().stdout).not.toContain("unhandled rejection");
      } finally {
        expect(await node.stop()).toBe(0);
      }
    } finally {
      first.stop();
      second.stop();
      await database.drop();
    }
  }, 40_000);

  test("TLS to PostgreSQL: verify-full with a private CA (NODE_EXTRA_CA_CERTS) serves over TLS only; without the CA the boot stops at once; require encrypts without verifying", async () => {
    const database = await freshPgDatabase("boot_tls");
    const url = new URL(database.url);
    const server = await startPgTlsServer({ hostname: url.hostname, port: Number(url.port || 5432) });
    // Trust auth: the password is never asked for, but it must never be printed either.
    const tlsUrl = (mode: string) => `postgres://${url.username}:not-a-real-password-43@127.0.0.1:${server.port}${url.pathname}?sslmode=${mode}`;
    // One DATA_DIR, so one master key, for the nodes below: they share the database's keys.
    const dataDir = join(tempDir(), "data");
    try {
      const verified = await startKeyward({ env: { DATA_DIR: dataDir, DATABASE_URL: tlsUrl("verify-full"), NODE_EXTRA_CA_CERTS: server.caFile } });
      try {
        expect((await fetch(`${verified.url}/api/v1/health`)).status).toBe(200);
        expect(await pubkey(verified.url)).toMatch(/^[0-9a-f]{64}$/);
      } finally {
        expect(await verified.stop()).toBe(0);
      }
      expect(server.counts().tls).toBeGreaterThan(0);
      expect(server.counts().plain).toBe(0);

      // The certificate cannot be verified: a configuration error, reported at once (not retried).
      const untrusted = runKeyward(["serve"], {
        env: { HOST: "127.0.0.1", PORT: "0", DATA_DIR: dataDir, LOG_LEVEL: "info", DATABASE_URL: tlsUrl("verify-full") },
      });
      const output = untrusted.stdout + untrusted.stderr;
      expect(untrusted.exitCode).toBe(1);
      const error = output
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.msg === "cannot open the database");
      expect(error).toMatchObject({ level: "error", host: `127.0.0.1:${server.port}` });
      expect(String(error!.error)).toMatch(/certificate/i);
      expect(output).not.toContain("not-a-real-password-43");
      expect(output).not.toContain("    at ");
      expect(output).not.toContain("retrying");

      const unverified = await startKeyward({ env: { DATA_DIR: dataDir, DATABASE_URL: tlsUrl("require") } });
      try {
        expect((await fetch(`${unverified.url}/api/v1/health`)).status).toBe(200);
      } finally {
        expect(await unverified.stop()).toBe(0);
      }
      expect(server.counts().plain).toBe(0);
    } finally {
      await server.stop();
      await database.drop();
    }
  }, 60_000);

  test("a database that does not exist stops the boot at once with one error line: no stack trace, no password", () => {
    const url = new URL(pgTestUrl()!);
    url.password = "not-a-real-password-42";
    url.pathname = "/keyward_no_such_database";
    const r = runKeyward(["serve"], { env: { HOST: "127.0.0.1", PORT: "0", DATA_DIR: join(tempDir(), "data"), LOG_LEVEL: "info", DATABASE_URL: url.toString() } });
    expect(r.exitCode).toBe(1);
    const lines = (r.stdout + r.stderr).trim().split("\n");
    const error = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === "cannot open the database");
    expect(error).toMatchObject({ level: "error", database: "keyward_no_such_database", code: "3D000" });
    expect(r.stdout + r.stderr).not.toContain("not-a-real-password-42");
    expect(r.stdout + r.stderr).not.toContain("    at ");
    expect(r.stdout + r.stderr).not.toContain("retrying");
  });
});
