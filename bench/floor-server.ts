// The floor for POST /license/verify: the irreducible work of one verification and nothing else —
// JSON parse, HMAC of the key, ONE prepared indexed read on a licenses table by key hash,
// ONE node:crypto Ed25519 signature over a small token payload, JSON out. No framework, no
// validation, no logging, no plan/feature load. Keyward's verify throughput is reported as a ratio
// of this (bench/verify.ts); the same wrk settings drive both.
//
//   bun bench/floor-server.ts --port 9001 --pairs pairs.json
//   bun bench/floor-server.ts --port 9001 --pairs pairs.json --pg postgres://…/db --pool 10
//
// The read is a bun:sqlite prepared statement on a temp file by default. With --pg it is one
// postgres.js query (a named prepared statement per connection, postgres.js's default, as Keyward's
// client uses) on a pool of --pool connections (Keyward's DATABASE_POOL_SIZE default, 10), in the
// given database, which must be empty: the floor creates its table there.
//
// pairs.json: [{"key": "<license key>", "identifier": "<activated identifier>"}, ...]
import { Database } from "bun:sqlite";
import postgres from "postgres";
import { createHmac, createPrivateKey, randomBytes, sign } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { ROUTES, wire } from "./lib/api";
import { tempDir } from "./lib/server";

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const port = Number(arg("--port") ?? 0);
const pairs = JSON.parse(readFileSync(arg("--pairs") ?? "", "utf8")) as { key: string; identifier: string }[];

const pgUrl = arg("--pg");
const poolSize = Number(arg("--pool") ?? 10);

interface Row {
  id: string;
  product_id: string;
  plan_id: string;
  status: string;
  identifier: string;
}

const lookupKey = randomBytes(32);
const keyHash = (key: string) => createHmac("sha256", lookupKey).update(key.trim().toUpperCase(), "utf8").digest("hex");
const productId = randomUUID();
const planId = randomUUID();
const seed = pairs.map((p) => ({ id: randomUUID(), key_hash: keyHash(p.key), product_id: productId, plan_id: planId, status: "active", identifier: p.identifier }));

const dir = tempDir("floor");
let findSqlite: ((hash: string) => Row | null) | null = null;
let findPg: ((hash: string) => Promise<Row | undefined>) | null = null;
let closeDb: () => Promise<void>;
if (pgUrl) {
  const sql = postgres(pgUrl, { max: poolSize, onnotice: () => {} });
  await sql`CREATE TABLE licenses (
    id text PRIMARY KEY, key_hash text NOT NULL UNIQUE, product_id text NOT NULL, plan_id text NOT NULL,
    status text NOT NULL, identifier text NOT NULL, valid_until timestamptz)`;
  await sql`INSERT INTO licenses ${sql(seed)}`;
  await sql`ANALYZE licenses`;
  findPg = async (hash) => (await sql<Row[]>`SELECT id, product_id, plan_id, status, identifier FROM licenses WHERE key_hash = ${hash}`)[0];
  closeDb = () => sql.end({ timeout: 5 });
} else {
  const db = new Database(join(dir, "floor.db"), { create: true, strict: true });
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec(`CREATE TABLE licenses (
    id TEXT PRIMARY KEY, key_hash TEXT NOT NULL UNIQUE, product_id TEXT NOT NULL, plan_id TEXT NOT NULL,
    status TEXT NOT NULL, identifier TEXT NOT NULL, valid_until INTEGER)`);
  const insert = db.prepare("INSERT INTO licenses (id, key_hash, product_id, plan_id, status, identifier) VALUES (?, ?, ?, ?, ?, ?)");
  db.transaction(() => {
    for (const r of seed) insert.run(r.id, r.key_hash, r.product_id, r.plan_id, r.status, r.identifier);
  })();
  const findByHash = db.prepare<Row, [string]>("SELECT id, product_id, plan_id, status, identifier FROM licenses WHERE key_hash = ?");
  findSqlite = (hash) => findByHash.get(hash);
  closeDb = async () => db.close();
}
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
const signingKey = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, randomBytes(32)]), format: "der", type: "pkcs8" });

const notFound = () =>
  Response.json({ success: false, error: { code: "LICENSE_NOT_FOUND", message: "License not found.", details: null } }, { status: 404 });

const server = Bun.serve({
  hostname: "127.0.0.1",
  port,
  async fetch(req) {
    const path = new URL(req.url).pathname;
    if (path === ROUTES.health) return Response.json({ success: true, data: { status: "ok" } });
    if (req.method !== "POST" || path !== ROUTES.verify) return notFound();
    const body = (await req.json()) as Record<string, unknown>;
    const key = body[wire.licenseKeyField];
    const identifier = body[wire.identifierField];
    if (typeof key !== "string" || typeof identifier !== "string") return notFound();
    const hash = keyHash(key);
    const row = findSqlite ? findSqlite(hash) : await findPg!(hash);
    if (!row || row.identifier !== identifier) return notFound();
    const iat = Math.floor(Date.now() / 1000);
    const payload = Buffer.from(
      JSON.stringify({
        lid: row.id,
        pid: row.product_id,
        pln: row.plan_id,
        sts: row.status,
        idn: identifier,
        iat,
        exp: iat + 7 * 86400,
        nce: randomBytes(8).toString("hex"),
      }),
    ).toString("base64url");
    const token = `${payload}.${sign(null, Buffer.from(payload), signingKey).toString("base64url")}`;
    return Response.json({ success: true, data: { status: row.status, plan_id: row.plan_id, features: {}, token } });
  },
});

console.log(`floor listening on http://127.0.0.1:${server.port} (${pairs.length} licenses, ${pgUrl ? `PostgreSQL, pool ${poolSize}` : "bun:sqlite"})`);

const shutdown = async () => {
  server.stop(true);
  await closeDb();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
};
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
