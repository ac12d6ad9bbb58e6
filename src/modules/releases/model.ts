import { t } from "../../http/schema";
import { SEMVER_PATTERN } from "../../shared/semver";
import { FeedText } from "../../http/common-schemas";

const Nullable = <T extends ReturnType<typeof t.String>>(s: T) => t.Union([s, t.Null()]);
const DateTime = t.String({ format: "date-time" });

// Literal unions, not t.UnionEnum: Elysia 1.4 fills an absent optional UnionEnum with its first
// value, which would turn "no channel filter" into "stable" and make PATCH reset the channel.
// Kept in step with PLATFORMS / RELEASE_CHANNELS (db/schema/releases.ts) by domain.test.ts.
export const PlatformSchema = t.Union(
  [
    t.Literal("darwin-arm64"),
    t.Literal("darwin-x64"),
    t.Literal("windows-arm64"),
    t.Literal("windows-x64"),
    t.Literal("linux-arm64"),
    t.Literal("linux-x64"),
    t.Literal("linux-armhf"),
  ],
  { description: "Target platform", examples: ["darwin-arm64"] },
);
export const ChannelSchema = t.Union([t.Literal("stable"), t.Literal("beta"), t.Literal("alpha"), t.Literal("dev")], {
  description: "Release channel; a channel also sees the more stable ones (beta sees stable, …)",
});
const StatusSchema = t.Union([t.Literal("draft"), t.Literal("published"), t.Literal("yanked")]);
export const VersionSchema = t.String({ pattern: SEMVER_PATTERN, maxLength: 128, description: "Semantic version (semver.org 2.0.0)", examples: ["1.4.0"] });
// Windows (10.0.17763) and macOS (11.0.0) minimum versions; WinSparkle also accepts 6.1-7601.
const MinimumOs = t.String({ pattern: "^[0-9][0-9A-Za-z._-]{0,31}$", description: "Minimum OS version, e.g. 11.0.0 (macOS) or 10.0.17763 (Windows)" });
const Notes = FeedText({ maxLength: 100_000, description: "Release notes (HTML or plain text); served in feeds" });
const Hex64 = t.String({ pattern: "^[0-9a-fA-F]{64}$" });

export const ArtifactSchema = t.Object(
  {
    id: t.String({ format: "uuid" }),
    release_id: t.String({ format: "uuid" }),
    platform: PlatformSchema,
    filename: t.String(),
    content_type: t.String(),
    size: t.Integer({ description: "Declared size in bytes (from the admin)" }),
    status: t.Union([t.Literal("pending"), t.Literal("finalized")]),
    sha256: Nullable(t.String({ description: "Hex SHA-256 computed by the server at finalize" })),
    file_size: t.Union([t.Integer({ description: "Size in bytes measured by the server at finalize (int64)" }), t.Null()]),
    blake2b512: Nullable(t.String({ description: "Hex BLAKE2b-512 (the minisign prehash)" })),
    ed_signature: Nullable(t.String({ description: "Sparkle edSignature (base64), set at publish" })),
    minisign_signature: Nullable(t.String({ description: "minisign signature file text, set at publish" })),
    signing_kid: Nullable(t.String()),
    created_at: DateTime,
    finalized_at: Nullable(DateTime),
  },
  { title: "Artifact" },
);

export const ReleaseSchema = t.Object(
  {
    id: t.String({ format: "uuid" }),
    product_id: t.String({ format: "uuid" }),
    version: t.String(),
    channel: ChannelSchema,
    notes: t.String(),
    minimum_os_version: Nullable(t.String()),
    status: StatusSchema,
    yank_reason: Nullable(t.String()),
    published_at: Nullable(DateTime),
    yanked_at: Nullable(DateTime),
    created_at: DateTime,
    updated_at: DateTime,
    artifacts: t.Array(ArtifactSchema),
  },
  { title: "Release" },
);

export const UploadSchema = t.Object(
  {
    url: t.String({ description: "Presigned upload URL; send the bytes with this method and headers before expires_at" }),
    method: t.Literal("PUT"),
    headers: t.Record(t.String(), t.String()),
    expires_at: DateTime,
  },
  { title: "PresignedUpload" },
);

export const CreateReleaseBody = t.Object(
  {
    version: VersionSchema,
    channel: t.Optional(ChannelSchema),
    notes: t.Optional(Notes),
    minimum_os_version: t.Optional(Nullable(MinimumOs)),
  },
  { additionalProperties: false },
);

export const UpdateReleaseBody = t.Object(
  {
    channel: t.Optional(ChannelSchema),
    notes: t.Optional(Notes),
    minimum_os_version: t.Optional(Nullable(MinimumOs)),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const ListReleasesQuery = t.Object({
  status: t.Optional(StatusSchema),
  channel: t.Optional(ChannelSchema),
  cursor: t.Optional(t.String({ maxLength: 1024 })),
  limit: t.Optional(t.QueryInteger({ minimum: 1, maximum: 100, default: 20 })),
});

export const AddArtifactBody = t.Object(
  {
    platform: PlatformSchema,
    // Printable and path-free: it ends the storage key and appears in the minisign trusted comment,
    // which may hold no CR/LF (update-formats.md §3.2).
    filename: t.String({ pattern: "^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$", examples: ["Acme-1.4.0.zip"] }),
    content_type: t.String({ pattern: "^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*$", maxLength: 255, examples: ["application/zip"] }),
    size: t.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: "Exact size in bytes of the file to upload" }),
  },
  { additionalProperties: false },
);

export const FinalizeBody = t.Object(
  { expected_sha256: t.Optional(Hex64) },
  { additionalProperties: false },
);

export const YankBody = t.Object(
  { reason: t.String({ minLength: 1, maxLength: 1000 }) },
  { additionalProperties: false },
);

export const IdParams = t.Object({ id: t.String({ format: "uuid" }) });
