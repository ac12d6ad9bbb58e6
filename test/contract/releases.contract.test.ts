// ReleaseRepo on every engine, its writes through the verbs' units of work (writes.ts storeRelease,
// changeRelease, removeDraft, storeArtifact, recordArtifactDigest, commitPublish): create and reads
// (artifacts by platform), semver ordering and pagination, artifact writes, publish, the feed, and
// the release generation every feed-visible change bumps. On PostgreSQL the ordering tests also run
// with linguistic column collations (as in a database created with en_US), and concurrent publishes,
// mutations and artifact replacements race as units from three pools (three nodes).
import { afterEach, expect, test } from "bun:test";
import { asc, eq } from "drizzle-orm";
import * as sqliteSchema from "../../src/db/schema";
import * as pgSchema from "../../src/db/schema-pg";
import type { Effects } from "../../src/modules/outbox/effects";
import { versionSortKey } from "../../src/modules/releases/domain";
import type { Artifact, ArtifactDigest, ArtifactSignatureRecord, Channel, Platform, Release, ReleasePatch, ReleaseRepo, ReleaseWithArtifacts } from "../../src/modules/releases/repo";
import { changeRelease, commitPublish, recordArtifactDigest, removeDraft, storeArtifact, storeRelease } from "../../src/modules/releases/writes";
import { SYSTEM_ACTOR } from "../../src/shared/actor";
import { AppError } from "../../src/shared/errors";
import { newId } from "../../src/shared/ids";
import { forEachEngine, type Opened } from "./harness";
import { repoFor } from "./repos";
import { seedProduct } from "./seed";
import { unitOf, withPgUnits, type Unit } from "./unit";

const t0 = new Date("2026-11-21T08:00:00.000Z");
const after = (ms: number) => new Date(t0.getTime() + ms);

const auditOf = (action: string, productId: string | null = null): Effects => ({
  audit: { actor: SYSTEM_ACTOR, action, entityType: "release", entityId: null, productId, changes: { action }, at: t0 },
});

function release(productId: string, version: string, over: Partial<Release> = {}): Release {
  return {
    id: newId(),
    productId,
    version,
    versionKey: versionSortKey(version),
    channel: "stable",
    notes: `Notes ${version}`,
    minimumOsVersion: null,
    status: "draft",
    yankReason: null,
    publishedAt: null,
    yankedAt: null,
    createdAt: t0,
    updatedAt: t0,
    ...over,
  };
}

function artifact(releaseId: string, platform: Platform, over: Partial<Artifact> = {}): Artifact {
  const id = newId();
  return {
    id,
    releaseId,
    platform,
    filename: `app-${platform}.zip`,
    contentType: "application/zip",
    declaredSize: 1234,
    storageKey: `uploads/${releaseId}/${id}/app-${platform}.zip`,
    status: "pending",
    sha256: null,
    fileSize: null,
    blake2b512: null,
    edSignature: null,
    minisignSignature: null,
    signingKid: null,
    createdAt: t0,
    finalizedAt: null,
    ...over,
  };
}

const finalized = (releaseId: string, platform: Platform, over: Partial<Artifact> = {}) =>
  artifact(releaseId, platform, { status: "finalized", sha256: "ab".repeat(32), fileSize: 1234, blake2b512: "cd".repeat(64), finalizedAt: t0, ...over });

/** Rows written straight into the engine's tables (fixtures do not go through the repository under test). */
async function insert(o: Opened, table: "releases" | "artifacts", rows: (Release | Artifact)[]): Promise<void> {
  if (o.sqlite) o.sqlite.db.insert(sqliteSchema[table] as any).values(rows as any).run();
  else await o.pg!.db.insert(pgSchema[table] as any).values(rows as any);
}

async function auditActions(o: Opened): Promise<string[]> {
  if (o.sqlite) return o.sqlite.db.select().from(sqliteSchema.auditLog).orderBy(asc(sqliteSchema.auditLog.action)).all().map((r) => r.action);
  return (await o.pg!.db.select().from(pgSchema.auditLog).orderBy(asc(pgSchema.auditLog.action))).map((r) => r.action);
}

async function generation(o: Opened, productId: string): Promise<number> {
  if (o.sqlite) return o.sqlite.db.select().from(sqliteSchema.products).where(eq(sqliteSchema.products.id, productId)).get()!.releaseGeneration;
  const [row] = await o.pg!.db.select().from(pgSchema.products).where(eq(pgSchema.products.id, productId));
  return row!.releaseGeneration;
}

/**
 * PostgreSQL only: gives the compared text columns a linguistic collation, as a database created with
 * an en_US locale has by default, so the byte ordering must come from the queries themselves.
 */
async function linguisticCollation(o: Opened): Promise<void> {
  if (!o.pg) return;
  await o.pg.sql.unsafe(`ALTER TABLE releases ALTER COLUMN version_key TYPE text COLLATE "en-US-x-icu"`);
  await o.pg.sql.unsafe(`ALTER TABLE artifacts ALTER COLUMN platform TYPE text COLLATE "en-US-x-icu"`);
  // The premise: under it, these keys do not sort as bytes.
  const [row] = await o.pg.sql<{ before: boolean }[]>`SELECT ${versionSortKey("1.0.0-Beta")}::text < ${versionSortKey("1.0.0-alpha")}::text COLLATE "en-US-x-icu" AS before`;
  expect(row!.before).toBe(false);
}

/** The release writes, each the verb's unit of work (writes.ts) on `unit`. */
function writesIn(unit: Unit) {
  return {
    create: (r: Release, effects: Effects) => unit((repos) => storeRelease(repos, r, effects)),
    mutate: (
      id: string,
      decide: (current: ReleaseWithArtifacts) => ReleasePatch,
      at: Date,
      effects: (before: ReleaseWithArtifacts, patch: ReleasePatch) => Effects,
    ) => unit((repos) => changeRelease(repos, id, decide, at, effects)),
    deleteDraft: (id: string, effects: Effects) => unit((repos) => removeDraft(repos, id, effects)),
    putArtifact: (a: Artifact, effects: (replaced: Artifact | null) => Effects) => unit((repos) => storeArtifact(repos, a, effects)),
    finalizeArtifact: (id: string, storageKey: string, digest: ArtifactDigest, at: Date, effects: Effects) =>
      unit((repos) => recordArtifactDigest(repos, id, storageKey, digest, at, effects)),
    publish: (id: string, signatures: ArtifactSignatureRecord[], at: Date, effects: Effects) => unit((repos) => commitPublish(repos, id, signatures, at, () => effects)),
  };
}

async function appError(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  throw new Error("expected an AppError");
}

/** Newest first by semver precedence (ASCII order for alphanumeric prerelease identifiers). */
const NEWEST_FIRST = [
  "10.0.0",
  "2.0.0",
  "1.10.0",
  "1.9.0",
  "1.0.0",
  "1.0.0-rc.1",
  "1.0.0-beta.11",
  "1.0.0-beta.2",
  "1.0.0-beta",
  "1.0.0-alpha.beta",
  "1.0.0-alpha.1",
  "1.0.0-alpha",
  "1.0.0-Beta",
  "1.0.0-0.3.7",
  "0.9.9",
];

forEachEngine("ReleaseRepo", (engine, open) => {
  let o: Opened;
  let repo: ReleaseRepo;
  let w: ReturnType<typeof writesIn>;
  let productId: string;
  const setup = async () => {
    o = await open();
    repo = repoFor(o).releases;
    w = writesIn(unitOf(o));
    productId = (await seedProduct(o)).id;
  };
  afterEach(() => o?.close());

  test("create stores the release and its audit row; found by id and by version, with no artifacts", async () => {
    await setup();
    const r = release(productId, "1.2.3", { minimumOsVersion: "13.0", notes: "Fixes" });
    expect(await w.create(r, auditOf("release.create", productId))).toEqual(r);
    const expected: ReleaseWithArtifacts = { ...r, artifacts: [] };
    expect(await repo.findById(r.id)).toEqual(expected);
    expect(await repo.findByVersion(productId, "1.2.3")).toEqual(expected);
    expect(await repo.findById("nope")).toBeNull();
    expect(await repo.findByVersion(productId, "1.2.4")).toBeNull();
    expect(await repo.findByVersion((await seedProduct(o)).id, "1.2.3")).toBeNull();
    expect(await auditActions(o)).toEqual(["release.create"]);
    expect(await generation(o, productId)).toBe(0); // a draft is not in any feed
  });

  test("create refuses a duplicate version, one of equal precedence and an unknown product with CONFLICT, writing nothing", async () => {
    await setup();
    await w.create(release(productId, "1.0.0"), auditOf("first"));
    const dup = await appError(w.create(release(productId, "1.0.0"), auditOf("dup")));
    expect([dup.code, dup.message]).toEqual(["CONFLICT", "Version 1.0.0 (or one of equal precedence) already exists for this product."]);
    const build = await appError(w.create(release(productId, "1.0.0+build.7"), auditOf("build")));
    expect([build.code, build.message]).toEqual(["CONFLICT", "Version 1.0.0+build.7 (or one of equal precedence) already exists for this product."]);
    const unknown = await appError(w.create(release("no-such-product", "1.0.0"), auditOf("unknown")));
    expect([unknown.code, unknown.message]).toEqual(["CONFLICT", "Unknown product."]);
    // Another product may have the same version.
    await w.create(release((await seedProduct(o)).id, "1.0.0"), auditOf("other"));
    expect(await auditActions(o)).toEqual(["first", "other"]);
  });

  test("artifacts come in platform byte order on every read", async () => {
    await setup();
    await linguisticCollation(o);
    const r = release(productId, "1.0.0");
    await insert(o, "releases", [r]);
    const platforms: Platform[] = ["windows-x64", "linux-armhf", "darwin-x64", "linux-arm64", "darwin-arm64", "windows-arm64", "linux-x64"];
    const rows = platforms.map((p) => artifact(r.id, p));
    await insert(o, "artifacts", rows);
    const sorted = [...rows].sort((a, b) => Buffer.compare(Buffer.from(a.platform), Buffer.from(b.platform)));
    expect(sorted.map((a) => a.platform)).toEqual(["darwin-arm64", "darwin-x64", "linux-arm64", "linux-armhf", "linux-x64", "windows-arm64", "windows-x64"]);
    expect((await repo.findById(r.id))!.artifacts).toEqual(sorted);
    expect((await repo.findByVersion(productId, "1.0.0"))!.artifacts).toEqual(sorted);
    expect((await repo.list({ productId, limit: 10 })).items[0]!.artifacts).toEqual(sorted);
  });

  test("list: newest first by semver precedence, paged with afterKey, filtered by status and channel", async () => {
    await setup();
    await linguisticCollation(o);
    const channels: Channel[] = ["stable", "beta", "alpha"];
    const shuffled = [...NEWEST_FIRST].sort().reverse();
    const rows = shuffled.map((v, i) =>
      release(productId, v, { channel: channels[i % 3]!, status: i % 4 === 0 ? "published" : "draft", publishedAt: i % 4 === 0 ? t0 : null }),
    );
    await insert(o, "releases", rows);
    const one = rows.find((r) => r.version === "1.0.0-beta.2")!;
    const art = artifact(one.id, "linux-x64");
    await insert(o, "artifacts", [art]);
    await insert(o, "releases", [release((await seedProduct(o)).id, "99.0.0")]); // another product's

    const seen: ReleaseWithArtifacts[] = [];
    const hasMore: boolean[] = [];
    let afterKey: string | undefined;
    for (;;) {
      const page = await repo.list({ productId, limit: 4, afterKey });
      seen.push(...page.items);
      hasMore.push(page.hasMore);
      if (!page.hasMore) break;
      afterKey = page.items.at(-1)!.versionKey;
    }
    expect(seen.map((r) => r.version)).toEqual(NEWEST_FIRST);
    expect(hasMore).toEqual([true, true, true, false]);
    expect(seen.find((r) => r.id === one.id)!.artifacts).toEqual([art]);
    expect(seen.filter((r) => r.id !== one.id).every((r) => r.artifacts.length === 0)).toBe(true);
    const { artifacts: _, ...plain } = seen.find((r) => r.version === "1.0.0")!;
    expect(plain).toEqual(rows.find((r) => r.version === "1.0.0")!);

    const byFilter = (f: { status?: Release["status"]; channel?: Channel }) =>
      rows.filter((r) => (!f.status || r.status === f.status) && (!f.channel || r.channel === f.channel)).map((r) => r.version);
    const ordered = (vs: string[]) => NEWEST_FIRST.filter((v) => vs.includes(v));
    expect((await repo.list({ productId, status: "published", limit: 50 })).items.map((r) => r.version)).toEqual(ordered(byFilter({ status: "published" })));
    expect((await repo.list({ productId, channel: "beta", limit: 50 })).items.map((r) => r.version)).toEqual(ordered(byFilter({ channel: "beta" })));
    const both = await repo.list({ productId, status: "draft", channel: "alpha", limit: 50 });
    expect(both.items.map((r) => r.version)).toEqual(ordered(byFilter({ status: "draft", channel: "alpha" })));
    expect(both.hasMore).toBe(false);
    // afterKey of a version that is not stored continues after where it would be.
    const fromMid = await repo.list({ productId, limit: 3, afterKey: versionSortKey("1.0.0-beta.3") });
    expect(fromMid.items.map((r) => r.version)).toEqual(["1.0.0-beta.2", "1.0.0-beta", "1.0.0-alpha.beta"]);
    expect(fromMid.hasMore).toBe(true);
    expect(await repo.list({ productId: "nope", limit: 5 })).toEqual({ items: [], hasMore: false });
  });

  test("findArtifact returns the artifact with its release; null when unknown", async () => {
    await setup();
    const r = release(productId, "3.0.0");
    const a = finalized(r.id, "darwin-arm64");
    await insert(o, "releases", [r]);
    await insert(o, "artifacts", [a, artifact(r.id, "linux-x64")]);
    expect(await repo.findArtifact(a.id)).toEqual({ artifact: a, release: r });
    expect(await repo.findArtifact("nope")).toBeNull();
  });

  test("mutate: decide sees the release with artifacts; the patch, updatedAt, a generation bump and the audit row commit together", async () => {
    await setup();
    const r = release(productId, "2.0.0", { status: "published", publishedAt: t0 });
    const a = finalized(r.id, "linux-x64");
    await insert(o, "releases", [r]);
    await insert(o, "artifacts", [a]);
    const seen: ReleaseWithArtifacts[] = [];
    const out = await w.mutate(
      r.id,
      (current) => (seen.push(current), { status: "yanked", yankReason: "broken", yankedAt: after(5) }),
      after(6),
      (before, patch) => auditOf(`yank:${before.status}->${patch.status}`, before.productId),
    );
    expect(seen).toEqual([{ ...r, artifacts: [a] }]);
    expect(out).toEqual({ ...r, status: "yanked", yankReason: "broken", yankedAt: after(5), updatedAt: after(6), artifacts: [a] });
    expect(await repo.findById(r.id)).toEqual(out);
    expect(await generation(o, productId)).toBe(1);
    expect(await auditActions(o)).toEqual(["yank:published->yanked"]);
  });

  test("mutate: null for a missing release; a refusing decide or audit writes nothing", async () => {
    await setup();
    let called = 0;
    expect(await w.mutate("nope", () => (called++, {}), t0, () => auditOf("x"))).toBeNull();
    expect(called).toBe(0);
    const r = release(productId, "2.0.0", { status: "published", publishedAt: t0 });
    await insert(o, "releases", [r]);
    const refusal = await appError(
      w.mutate(r.id, () => {
        throw new AppError("INVALID_TRANSITION", { message: "no" });
      }, after(1), () => auditOf("never")),
    );
    expect(refusal.code).toBe("INVALID_TRANSITION");
    await expect(
      w.mutate(r.id, () => ({ notes: "changed" }), after(1), () => {
        throw new Error("audit refused");
      }),
    ).rejects.toThrow("audit refused");
    expect(await repo.findById(r.id)).toEqual({ ...r, artifacts: [] });
    expect(await generation(o, productId)).toBe(0);
    expect(await auditActions(o)).toEqual([]);
  });

  test("deleteDraft removes a draft and its artifacts and returns their storage keys; refuses a published release", async () => {
    await setup();
    const draft = release(productId, "1.0.0");
    const pub = release(productId, "0.9.0", { status: "published", publishedAt: t0 });
    await insert(o, "releases", [draft, pub]);
    const arts = [artifact(draft.id, "windows-x64"), artifact(draft.id, "darwin-arm64")];
    const pubArt = finalized(pub.id, "linux-x64");
    await insert(o, "artifacts", [...arts, pubArt]);

    const refused = await appError(w.deleteDraft(pub.id, auditOf("never")));
    expect([refused.code, refused.message, refused.details]).toEqual([
      "INVALID_TRANSITION",
      "Only draft releases can be deleted; this one is published. Yank it instead.",
      { from: "published", action: "delete" },
    ]);
    expect(await repo.findById(pub.id)).toEqual({ ...pub, artifacts: [pubArt] });

    expect(await w.deleteDraft(draft.id, auditOf("release.delete"))).toEqual([arts[1]!.storageKey, arts[0]!.storageKey]);
    expect(await repo.findById(draft.id)).toBeNull();
    expect(await repo.findArtifact(arts[0]!.id)).toBeNull();
    expect(await w.deleteDraft(draft.id, auditOf("again"))).toBeNull();
    expect(await auditActions(o)).toEqual(["release.delete"]);
  });

  test("putArtifact adds to a draft, replaces the same platform's artifact, touches updatedAt; refusals write nothing", async () => {
    await setup();
    const r = release(productId, "1.0.0");
    await insert(o, "releases", [r]);
    const first = artifact(r.id, "linux-x64", { createdAt: after(10) });
    const seen: (Artifact | null)[] = [];
    const audit = (tag: string) => (replaced: Artifact | null) => (seen.push(replaced), auditOf(tag));
    expect(await w.putArtifact(first, audit("put1"))).toEqual({ replaced: null });
    const other = artifact(r.id, "darwin-arm64", { createdAt: after(15) });
    await w.putArtifact(other, audit("put2"));
    const second = artifact(r.id, "linux-x64", { createdAt: after(20) });
    expect(await w.putArtifact(second, audit("put3"))).toEqual({ replaced: first });
    expect(seen).toEqual([null, null, first]);
    expect(await repo.findById(r.id)).toEqual({ ...r, updatedAt: after(20), artifacts: [other, second] });

    // The audit callback refusing rolls the replacement back.
    await expect(
      w.putArtifact(artifact(r.id, "linux-x64", { createdAt: after(30) }), () => {
        throw new Error("audit refused");
      }),
    ).rejects.toThrow("audit refused");
    expect(await repo.findById(r.id)).toEqual({ ...r, updatedAt: after(20), artifacts: [other, second] });

    const missing = await appError(w.putArtifact(artifact("nope", "linux-x64"), audit("never")));
    expect([missing.code, missing.message]).toEqual(["NOT_FOUND", "Release not found."]);
    const pub = release(productId, "0.1.0", { status: "published", publishedAt: t0 });
    await insert(o, "releases", [pub]);
    const refused = await appError(w.putArtifact(artifact(pub.id, "linux-x64"), audit("never")));
    expect([refused.code, refused.message, refused.details]).toEqual([
      "INVALID_TRANSITION",
      "Artifacts can only be added to draft releases; this one is published.",
      { from: "published", action: "add_artifact" },
    ]);
    expect(await repo.findById(pub.id)).toEqual({ ...pub, artifacts: [] });
    expect(await auditActions(o)).toEqual(["put1", "put2", "put3"]);
    expect(await generation(o, productId)).toBe(0);
  });

  test("finalizeArtifact records the digest while the release is a draft and the storage key matches", async () => {
    await setup();
    const r = release(productId, "1.0.0");
    await insert(o, "releases", [r]);
    const a = artifact(r.id, "linux-x64");
    await insert(o, "artifacts", [a]);
    const digest = { sha256: "11".repeat(32), fileSize: 5_000_000_000, blake2b512: "22".repeat(64) };

    const replaced = await appError(w.finalizeArtifact(a.id, "uploads/other", digest, after(1), auditOf("never")));
    expect([replaced.code, replaced.message]).toEqual(["CONFLICT", "The artifact was replaced while it was being finalized."]);
    expect(await w.finalizeArtifact("nope", a.storageKey, digest, after(1), auditOf("never"))).toBeNull();

    const done = await w.finalizeArtifact(a.id, a.storageKey, digest, after(2), auditOf("artifact.finalize"));
    const expected: Artifact = { ...a, status: "finalized", ...digest, finalizedAt: after(2) };
    expect(done).toEqual(expected);
    expect((await repo.findArtifact(a.id))!.artifact).toEqual(expected);

    const pub = release(productId, "0.5.0", { status: "yanked", publishedAt: t0 });
    await insert(o, "releases", [pub]);
    const pa = artifact(pub.id, "linux-x64");
    await insert(o, "artifacts", [pa]);
    const refused = await appError(w.finalizeArtifact(pa.id, pa.storageKey, digest, after(3), auditOf("never")));
    expect([refused.code, refused.message, refused.details]).toEqual([
      "INVALID_TRANSITION",
      "Artifacts of a yanked release cannot be finalized again.",
      { from: "yanked", action: "finalize" },
    ]);
    expect((await repo.findArtifact(pa.id))!.artifact).toEqual(pa);
    expect(await auditActions(o)).toEqual(["artifact.finalize"]);
  });

  test("publish flips a draft, stores every signature, bumps the generation and audits, all at once", async () => {
    await setup();
    const r = release(productId, "1.0.0");
    await insert(o, "releases", [r]);
    const arts = [finalized(r.id, "linux-x64", { blake2b512: "aa".repeat(64) }), finalized(r.id, "darwin-arm64", { blake2b512: "bb".repeat(64) })];
    await insert(o, "artifacts", arts);
    const sigs: ArtifactSignatureRecord[] = arts.map((a, i) => ({
      artifactId: a.id,
      blake2b512: a.blake2b512!,
      edSignature: `ed-${i}`,
      minisignSignature: `mini-${i}`,
      signingKid: "kid-1",
    }));
    const out = await w.publish(r.id, sigs, after(9), auditOf("release.publish"));
    const signedArts = arts.map((a, i) => ({ ...a, edSignature: `ed-${i}`, minisignSignature: `mini-${i}`, signingKid: "kid-1" }));
    const expected = { ...r, status: "published" as const, publishedAt: after(9), updatedAt: after(9), artifacts: [signedArts[1]!, signedArts[0]!] };
    expect(out).toEqual(expected);
    expect(await repo.findById(r.id)).toEqual(expected);
    expect(await generation(o, productId)).toBe(1);

    const again = await appError(w.publish(r.id, sigs, after(10), auditOf("never")));
    expect([again.code, again.message, again.details]).toEqual(["INVALID_TRANSITION", "The release is already published.", { from: "published", action: "publish" }]);
    const missing = await appError(w.publish("nope", [], after(10), auditOf("never")));
    expect([missing.code, missing.message]).toEqual(["NOT_FOUND", "Release not found."]);
    expect(await generation(o, productId)).toBe(1);
    expect(await auditActions(o)).toEqual(["release.publish"]);
  });

  test("publish refuses with CONFLICT when the artifacts changed after signing, and the release stays a draft", async () => {
    await setup();
    const r = release(productId, "1.0.0");
    await insert(o, "releases", [r]);
    const a = finalized(r.id, "linux-x64");
    const b = finalized(r.id, "windows-x64");
    await insert(o, "artifacts", [a, b]);
    const sig = (x: Artifact, blake = x.blake2b512!): ArtifactSignatureRecord => ({ artifactId: x.id, blake2b512: blake, edSignature: "e", minisignSignature: "m", signingKid: "k" });
    const attempts: ArtifactSignatureRecord[][] = [
      [sig(a)], // an artifact was added after signing
      [sig(a), sig(b, "ff".repeat(64))], // bytes changed
      [sig(a), sig(b), { ...sig(a), artifactId: "gone" }], // one was removed
    ];
    for (const sigs of attempts) {
      const e = await appError(w.publish(r.id, sigs, after(1), auditOf("never")));
      expect([e.code, e.message]).toEqual(["CONFLICT", "The release's artifacts changed while it was being published; publish again."]);
    }
    // A pending artifact is never publishable, even when "signed".
    const p = artifact(r.id, "darwin-x64");
    await insert(o, "artifacts", [p]);
    const pending = await appError(w.publish(r.id, [sig(a), sig(b), { ...sig(p), blake2b512: null as unknown as string }], after(1), auditOf("never")));
    expect(pending.code).toBe("CONFLICT");
    expect(await repo.findById(r.id)).toEqual({ ...r, artifacts: [p, a, b] });
    expect(await generation(o, productId)).toBe(0);
    expect(await auditActions(o)).toEqual([]);
  });

  test("feed: published releases with a finalized artifact for the platform, in the channels, before the cutoff, newest first", async () => {
    await setup();
    await linguisticCollation(o);
    const published = (v: string, channel: Channel, at: Date, over: Partial<Release> = {}) =>
      release(productId, v, { channel, status: "published", publishedAt: at, ...over });
    const rs = {
      stable2: published("2.0.0", "stable", after(50)),
      beta: published("2.1.0-beta.1", "beta", after(60)),
      betaUpper: published("2.1.0-Beta.2", "beta", after(61)),
      alpha: published("3.0.0-alpha", "alpha", after(70)),
      stable1: published("1.0.0", "stable", after(10)),
      stable15: published("1.5.0", "stable", after(30)),
      yanked: published("1.9.0", "stable", after(40), { status: "yanked", yankedAt: after(45) }),
      draft: release(productId, "4.0.0"),
      pendingOnly: published("1.8.0", "stable", after(35)),
      otherPlatform: published("1.7.0", "stable", after(34)),
    };
    await insert(o, "releases", Object.values(rs));
    const linux = (r: Release) => finalized(r.id, "linux-x64");
    const arts = {
      stable2: linux(rs.stable2),
      beta: linux(rs.beta),
      betaUpper: linux(rs.betaUpper),
      alpha: linux(rs.alpha),
      stable1: linux(rs.stable1),
      stable15: linux(rs.stable15),
      yanked: linux(rs.yanked),
      draft: linux(rs.draft),
    };
    await insert(o, "artifacts", [
      ...Object.values(arts),
      finalized(rs.stable2.id, "darwin-arm64"),
      artifact(rs.pendingOnly.id, "linux-x64"),
      finalized(rs.otherPlatform.id, "windows-x64"),
    ]);
    await insert(o, "releases", [release((await seedProduct(o)).id, "9.0.0", { status: "published", publishedAt: t0 })]);

    const feed = (channels: Channel[], limit = 10, publishedBefore: Date | null = null) =>
      repo.feed({ productId, channels, platform: "linux-x64", limit, publishedBefore });
    expect(await feed(["stable"])).toEqual([
      { release: rs.stable2, artifact: arts.stable2 },
      { release: rs.stable15, artifact: arts.stable15 },
      { release: rs.stable1, artifact: arts.stable1 },
    ]);
    const versions = async (channels: Channel[], limit?: number, before?: Date | null) => (await feed(channels, limit, before)).map((e) => e.release.version);
    // Semver: 2.1.0-beta.1 > 2.1.0-Beta.2 (ASCII: "B" < "b").
    expect(await versions(["beta", "stable"])).toEqual(["2.1.0-beta.1", "2.1.0-Beta.2", "2.0.0", "1.5.0", "1.0.0"]);
    expect(await versions(["alpha", "beta", "stable"], 3)).toEqual(["3.0.0-alpha", "2.1.0-beta.1", "2.1.0-Beta.2"]);
    expect(await versions(["dev"])).toEqual([]);
    // The cutoff is strict: published before it.
    expect(await versions(["stable", "beta"], 10, after(50))).toEqual(["1.5.0", "1.0.0"]);
    expect(await versions(["stable"], 10, after(51))).toEqual(["2.0.0", "1.5.0", "1.0.0"]);
    expect(await repo.feed({ productId, channels: ["stable"], platform: "darwin-arm64", limit: 5, publishedBefore: null })).toEqual([
      { release: rs.stable2, artifact: (await repo.findById(rs.stable2.id))!.artifacts[0]! },
    ]);
  });

  if (engine === "postgres") {
    test("30 concurrent publishes of one draft from three nodes: exactly one wins, one bump, one audit row", async () => {
      await setup();
      const r = release(productId, "1.0.0");
      await insert(o, "releases", [r]);
      const a = finalized(r.id, "linux-x64");
      await insert(o, "artifacts", [a]);
      const sigs = [{ artifactId: a.id, blake2b512: a.blake2b512!, edSignature: "e", minisignSignature: "m", signingKid: "k" }];
      const results = await withPgUnits(o, 3, (units) =>
        Promise.allSettled(Array.from({ length: 30 }, (_, i) => writesIn(units[i % 3]!).publish(r.id, sigs, after(i + 1), auditOf("release.publish")))),
      );
      const won = results.flatMap((x, i) => (x.status === "fulfilled" ? [i] : []));
      expect(won).toHaveLength(1);
      for (const x of results) if (x.status === "rejected") expect((x.reason as AppError).code).toBe("INVALID_TRANSITION");
      expect((await repo.findById(r.id))!.publishedAt).toEqual(after(won[0]! + 1));
      expect(await generation(o, productId)).toBe(1);
      expect(await auditActions(o)).toEqual(["release.publish"]);
    });

    test("30 concurrent mutations from three nodes each see the previous one's result (no lost update)", async () => {
      await setup();
      const r = release(productId, "1.0.0", { status: "published", publishedAt: t0, notes: "" });
      await insert(o, "releases", [r]);
      await withPgUnits(o, 3, (units) =>
        Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            writesIn(units[i % 3]!).mutate(r.id, (cur) => ({ notes: `${cur.notes}x` }), after(i), () => auditOf("release.update")),
          ),
        ),
      );
      expect((await repo.findById(r.id))!.notes).toBe("x".repeat(30));
      expect(await generation(o, productId)).toBe(30);
      expect(await auditActions(o)).toHaveLength(30);
    });

    test("30 concurrent replacements of one platform's artifact from three nodes: each replaces a different one", async () => {
      await setup();
      const r = release(productId, "1.0.0");
      await insert(o, "releases", [r]);
      const puts = Array.from({ length: 30 }, (_, i) => artifact(r.id, "linux-x64", { createdAt: after(i) }));
      const results = await withPgUnits(o, 3, (units) => Promise.all(puts.map((a, i) => writesIn(units[i % 3]!).putArtifact(a, () => auditOf("artifact.put")))));
      const replaced = results.flatMap((x) => (x.replaced ? [x.replaced.id] : []));
      expect(replaced).toHaveLength(29);
      expect(new Set(replaced).size).toBe(29);
      const last = (await repo.findById(r.id))!.artifacts;
      expect(last).toHaveLength(1);
      // The survivor is the one artifact nobody replaced.
      expect(replaced).not.toContain(last[0]!.id);
      expect(new Set([...replaced, last[0]!.id])).toEqual(new Set(puts.map((a) => a.id)));
    });
  }
});
