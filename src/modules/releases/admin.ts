import { Elysia } from "elysia";
import { t } from "../../http/schema";
import type { Deps } from "../../deps";
import type { AdminGuard } from "../../http/auth";
import { Empty, Envelope, errors, ok } from "../../http/envelope";
import {
  AddArtifactBody,
  ArtifactSchema,
  CreateReleaseBody,
  FinalizeBody,
  IdParams,
  ListReleasesQuery,
  ReleaseSchema,
  UpdateReleaseBody,
  UploadSchema,
  YankBody,
} from "./model";
import { presentArtifact, presentRelease, presentUpload } from "./present";
import {
  addArtifact,
  createRelease,
  deleteRelease,
  finalizeArtifact,
  getRelease,
  listReleases,
  publishRelease,
  unyankRelease,
  updateRelease,
  yankRelease,
} from "./service";

const detail = (summary: string) => ({ tags: ["Admin: releases"], summary });
// Spec "API key rules": releases:write pushes releases and artifacts; admin may do everything.
const RELEASES = ["releases:write"] as const;

export function releaseAdminRoutes(deps: Deps, guard: AdminGuard) {
  return new Elysia({ name: "keyward/releases/admin" })
    .use(guard)
    .post(
      "/admin/products/:id/releases",
      async ({ actor, params, body, set }) => {
        const release = await createRelease(deps, actor, params.id, {
          version: body.version,
          channel: body.channel,
          notes: body.notes,
          minimumOsVersion: body.minimum_os_version,
        });
        set.status = 201;
        return ok(presentRelease(release));
      },
      {
        scopes: RELEASES,
        params: IdParams,
        body: CreateReleaseBody,
        response: { 201: Envelope(ReleaseSchema), ...errors(401, 403, 404, 409) },
        detail: detail("Create a draft release (409 CONFLICT when the version exists)"),
      },
    )
    .get(
      "/admin/products/:id/releases",
      async ({ actor, params, query }) => {
        const page = await listReleases(deps, actor, params.id, {
          status: query.status,
          channel: query.channel,
          cursor: query.cursor,
          limit: query.limit ?? 20,
        });
        return ok({ items: page.items.map(presentRelease), next_cursor: page.nextCursor });
      },
      {
        scopes: RELEASES,
        params: IdParams,
        query: ListReleasesQuery,
        response: {
          200: Envelope(t.Object({ items: t.Array(ReleaseSchema), next_cursor: t.Union([t.String(), t.Null()]) })),
          ...errors(401, 403, 404),
        },
        detail: detail("List a product's releases, newest version first"),
      },
    )
    .get("/admin/releases/:id", async ({ actor, params }) => ok(presentRelease(await getRelease(deps, actor, params.id))), {
      scopes: RELEASES,
      params: IdParams,
      response: { 200: Envelope(ReleaseSchema), ...errors(401, 403, 404) },
      detail: detail("Fetch a release with its artifacts"),
    })
    .patch(
      "/admin/releases/:id",
      async ({ actor, params, body }) =>
        ok(
          presentRelease(
            await updateRelease(deps, actor, params.id, {
              channel: body.channel,
              notes: body.notes,
              minimumOsVersion: body.minimum_os_version,
            }),
          ),
        ),
      {
        scopes: RELEASES,
        params: IdParams,
        body: UpdateReleaseBody,
        response: { 200: Envelope(ReleaseSchema), ...errors(401, 403, 404, 409) },
        detail: detail("Edit a draft's notes, channel or minimum OS version"),
      },
    )
    .delete(
      "/admin/releases/:id",
      async ({ actor, params }) => {
        await deleteRelease(deps, actor, params.id);
        return ok({});
      },
      {
        scopes: RELEASES,
        params: IdParams,
        response: { 200: Envelope(Empty), ...errors(401, 403, 404, 409) },
        detail: detail("Delete a draft release and its uploaded objects (published releases are yanked instead)"),
      },
    )
    .post(
      "/admin/releases/:id/artifacts",
      async ({ actor, params, body, set }) => {
        const { artifact, upload } = await addArtifact(deps, actor, params.id, {
          platform: body.platform,
          filename: body.filename,
          contentType: body.content_type,
          size: body.size,
        });
        set.status = 201;
        return ok({ artifact: presentArtifact(artifact), upload: presentUpload(upload) });
      },
      {
        scopes: RELEASES,
        params: IdParams,
        body: AddArtifactBody,
        response: {
          201: Envelope(t.Object({ artifact: ArtifactSchema, upload: UploadSchema })),
          ...errors(401, 403, 404, 409, 503),
        },
        detail: detail("Add (or replace) a draft's artifact for a platform; returns a presigned upload URL"),
      },
    )
    .post(
      "/admin/artifacts/:id/finalize",
      async ({ actor, params, body }) => ok(presentArtifact(await finalizeArtifact(deps, actor, params.id, body.expected_sha256))),
      {
        scopes: RELEASES,
        params: IdParams,
        body: FinalizeBody,
        response: { 200: Envelope(ArtifactSchema), ...errors(401, 403, 404, 409, 503) },
        detail: detail("Hash the uploaded object server-side (sha256, size); 409 on a missing object or expected_sha256 mismatch"),
      },
    )
    .post("/admin/releases/:id/publish", async ({ actor, params }) => ok(presentRelease(await publishRelease(deps, actor, params.id))), {
      scopes: RELEASES,
      params: IdParams,
      response: { 200: Envelope(ReleaseSchema), ...errors(401, 403, 404, 409, 503) },
      detail: detail("Sign every artifact and publish atomically (409 unless every artifact is finalized, or when already published)"),
    })
    .post("/admin/releases/:id/yank", async ({ actor, params, body }) => ok(presentRelease(await yankRelease(deps, actor, params.id, body.reason))), {
      scopes: RELEASES,
      params: IdParams,
      body: YankBody,
      response: { 200: Envelope(ReleaseSchema), ...errors(401, 403, 404, 409) },
      detail: detail("Withdraw a published release from every feed and download at once"),
    })
    .post("/admin/releases/:id/unyank", async ({ actor, params }) => ok(presentRelease(await unyankRelease(deps, actor, params.id))), {
      scopes: RELEASES,
      params: IdParams,
      response: { 200: Envelope(ReleaseSchema), ...errors(401, 403, 404, 409) },
      detail: detail("Make a yanked release visible again"),
    });
}
