import { t } from "../../http/schema";
import { SEMVER_PATTERN } from "../../shared/semver";
import { ChannelSchema, PlatformSchema } from "../releases/model";

// Spec: "version (string, optional; empty means latest)".
const SEMVER_OR_EMPTY = `^(?:${SEMVER_PATTERN.slice(1, -1)})?$`;

export const DownloadBody = t.Object({
  license_key: t.String({ minLength: 1, maxLength: 128 }),
  platform: PlatformSchema,
  version: t.Optional(
    t.String({ pattern: SEMVER_OR_EMPTY, maxLength: 128, description: "Exact version; empty or omitted means the newest" }),
  ),
  channel: t.Optional(ChannelSchema),
});

export const DownloadResult = t.Object(
  {
    url: t.String({ format: "uri", description: "Short-lived presigned URL" }),
    expires_at: t.String({ format: "date-time" }),
    version: t.String(),
    platform: PlatformSchema,
    sha256: t.String(),
    file_size: t.Integer({ description: "Bytes (int64)" }),
  },
  { title: "Download" },
);

export const RedirectParams = t.Object({
  slug: t.String({ maxLength: 64 }),
  artifact_id: t.String({ format: "uuid" }),
});

export const RedirectQuery = t.Object({
  license_key: t.Optional(t.String({ maxLength: 128 })),
});
