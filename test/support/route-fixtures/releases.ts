// Route fixtures for the release admin routes (COMMON.md rule 13). Resources are made through the
// release services, the way an admin would: draft, artifact, server-side upload, finalize, publish.
import type { RouteFixtureContext, RouteFixtures } from "./types";
import { SYSTEM_ACTOR } from "../../../src/shared/actor";
import { addArtifact, createRelease, finalizeArtifact, publishRelease, yankRelease } from "../../../src/modules/releases/service";

let seq = 0;

async function draft(ctx: RouteFixtureContext) {
  return await createRelease(ctx.t.deps, SYSTEM_ACTOR, ctx.product.id, { version: `900.0.${++seq}`, notes: "fixture" });
}

/** A draft with one uploaded object; finalized (hashed server-side) unless told otherwise. */
async function draftWithArtifact(ctx: RouteFixtureContext, finalize: boolean) {
  const { deps } = ctx.t;
  const release = await draft(ctx);
  const bytes = new TextEncoder().encode(`fixture artifact ${seq}\n`);
  const { artifact } = await addArtifact(deps, SYSTEM_ACTOR, release.id, {
    platform: "linux-x64",
    filename: "app.bin",
    contentType: "application/octet-stream",
    size: bytes.byteLength,
  });
  await deps.storage.put(artifact.storageKey, bytes, "application/octet-stream");
  if (finalize) await finalizeArtifact(deps, SYSTEM_ACTOR, artifact.id);
  return { release, artifact };
}

async function published(ctx: RouteFixtureContext) {
  const { release } = await draftWithArtifact(ctx, true);
  return await publishRelease(ctx.t.deps, SYSTEM_ACTOR, release.id);
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
    build: async (ctx) => ({ params: { id: (await draft(ctx)).id } }),
  },
  "PATCH /api/v1/admin/releases/:id": {
    scopes: ["releases:write"],
    build: async (ctx) => ({ params: { id: (await draft(ctx)).id }, body: { notes: "edited" } }),
  },
  "DELETE /api/v1/admin/releases/:id": {
    scopes: ["releases:write"],
    build: async (ctx) => ({ params: { id: (await draftWithArtifact(ctx, false)).release.id } }),
  },
  "POST /api/v1/admin/releases/:id/artifacts": {
    scopes: ["releases:write"],
    build: async (ctx) => ({
      params: { id: (await draft(ctx)).id },
      body: { platform: "darwin-arm64", filename: "App.zip", content_type: "application/zip", size: 10 },
    }),
  },
  "POST /api/v1/admin/artifacts/:id/finalize": {
    scopes: ["releases:write"],
    build: async (ctx) => ({ params: { id: (await draftWithArtifact(ctx, false)).artifact.id }, body: {} }),
  },
  "POST /api/v1/admin/releases/:id/publish": {
    scopes: ["releases:write"],
    build: async (ctx) => ({ params: { id: (await draftWithArtifact(ctx, true)).release.id } }),
  },
  "POST /api/v1/admin/releases/:id/yank": {
    scopes: ["releases:write"],
    build: async (ctx) => ({ params: { id: (await published(ctx)).id }, body: { reason: "fixture" } }),
  },
  "POST /api/v1/admin/releases/:id/unyank": {
    scopes: ["releases:write"],
    build: async (ctx) => {
      const release = await published(ctx);
      await yankRelease(ctx.t.deps, SYSTEM_ACTOR, release.id, "fixture");
      return { params: { id: release.id } };
    },
  },
};

export default fixtures;
