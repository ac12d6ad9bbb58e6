// Route fixtures for the release admin routes (COMMON.md rule 13). build() is synchronous, so
// resources are made through the synchronous services and repositories; the one asynchronous piece,
// an uploaded object, is written straight into the local storage driver's directory (the default
// driver in tests; objects live at STORAGE_LOCAL_DIR/<key>).
import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { RouteFixtureContext, RouteFixtures } from "./types";
import { SYSTEM_ACTOR } from "../../../src/shared/actor";
import { newId } from "../../../src/shared/ids";
import { createRelease } from "../../../src/modules/releases/service";
import type { Artifact } from "../../../src/modules/releases/repo";

let seq = 0;

const audit = (ctx: RouteFixtureContext, action: string, id: string) => ({
  actor: SYSTEM_ACTOR,
  action,
  entityType: "release",
  entityId: id,
  productId: ctx.product.id,
  changes: null,
  at: ctx.t.clock.now(),
});

function draft(ctx: RouteFixtureContext) {
  return createRelease(ctx.t.deps, SYSTEM_ACTOR, ctx.product.id, { version: `900.0.${++seq}`, notes: "fixture" });
}

/** A draft with one uploaded object; finalized (hashes recorded) unless told otherwise. */
function draftWithArtifact(ctx: RouteFixtureContext, finalize: boolean) {
  const { deps } = ctx.t;
  const release = draft(ctx);
  const bytes = Buffer.from(`fixture artifact ${seq}\n`);
  const id = newId();
  const artifact: Artifact = {
    id,
    releaseId: release.id,
    platform: "linux-x64",
    filename: "app.bin",
    contentType: "application/octet-stream",
    declaredSize: bytes.length,
    storageKey: `releases/${ctx.product.id}/${release.id}/${id}/app.bin`,
    status: "pending",
    sha256: null,
    fileSize: null,
    blake2b512: null,
    edSignature: null,
    minisignSignature: null,
    signingKid: null,
    createdAt: deps.clock.now(),
    finalizedAt: null,
  };
  deps.repos.releases.putArtifact(artifact, () => audit(ctx, "artifact.add", id));
  const path = join(deps.config.storage.localDir, ...artifact.storageKey.split("/"));
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, bytes);
  if (finalize) {
    deps.repos.releases.finalizeArtifact(
      id,
      artifact.storageKey,
      {
        sha256: createHash("sha256").update(bytes).digest("hex"),
        fileSize: bytes.length,
        blake2b512: createHash("blake2b512").update(bytes).digest("hex"),
      },
      deps.clock.now(),
      audit(ctx, "artifact.finalize", id),
    );
  }
  return { release, artifact };
}

/** Published without running the signer (async): the yank/unyank routes never read signatures. */
function published(ctx: RouteFixtureContext) {
  const { release, artifact } = draftWithArtifact(ctx, true);
  const blake = ctx.t.deps.repos.releases.findArtifact(artifact.id)!.artifact.blake2b512!;
  ctx.t.deps.repos.releases.publish(
    release.id,
    [{ artifactId: artifact.id, blake2b512: blake, edSignature: "fixture", minisignSignature: "fixture", signingKid: "fixture" }],
    ctx.t.clock.now(),
    audit(ctx, "release.publish", release.id),
  );
  return release;
}

const fixtures: RouteFixtures = {
  "POST /api/v1/admin/products/:id/releases": {
    scopes: ["releases:write"],
    build: ({ product }) => ({ params: { id: product.id }, body: { version: `901.0.${++seq}`, channel: "beta" } }),
  },
  "GET /api/v1/admin/products/:id/releases": {
    scopes: ["releases:write"],
    build: ({ product }) => ({ params: { id: product.id }, query: { limit: "5" } }),
  },
  "GET /api/v1/admin/releases/:id": {
    scopes: ["releases:write"],
    build: (ctx) => ({ params: { id: draft(ctx).id } }),
  },
  "PATCH /api/v1/admin/releases/:id": {
    scopes: ["releases:write"],
    build: (ctx) => ({ params: { id: draft(ctx).id }, body: { notes: "edited" } }),
  },
  "DELETE /api/v1/admin/releases/:id": {
    scopes: ["releases:write"],
    build: (ctx) => ({ params: { id: draftWithArtifact(ctx, false).release.id } }),
  },
  "POST /api/v1/admin/releases/:id/artifacts": {
    scopes: ["releases:write"],
    build: (ctx) => ({
      params: { id: draft(ctx).id },
      body: { platform: "darwin-arm64", filename: "App.zip", content_type: "application/zip", size: 10 },
    }),
  },
  "POST /api/v1/admin/artifacts/:id/finalize": {
    scopes: ["releases:write"],
    build: (ctx) => ({ params: { id: draftWithArtifact(ctx, false).artifact.id }, body: {} }),
  },
  "POST /api/v1/admin/releases/:id/publish": {
    scopes: ["releases:write"],
    build: (ctx) => ({ params: { id: draftWithArtifact(ctx, true).release.id } }),
  },
  "POST /api/v1/admin/releases/:id/yank": {
    scopes: ["releases:write"],
    build: (ctx) => ({ params: { id: published(ctx).id }, body: { reason: "fixture" } }),
  },
  "POST /api/v1/admin/releases/:id/unyank": {
    scopes: ["releases:write"],
    build: (ctx) => {
      const release = published(ctx);
      ctx.t.deps.repos.releases.mutate(
        release.id,
        () => ({ status: "yanked", yankReason: "fixture", yankedAt: ctx.t.clock.now() }),
        ctx.t.clock.now(),
        () => audit(ctx, "release.yank", release.id),
      );
      return { params: { id: release.id } };
    },
  },
};

export default fixtures;
