import { t } from "../../http/schema";
import { ChannelSchema, PlatformSchema, VersionSchema } from "../releases/model";

const LicenseKeyQuery = t.Optional(
  t.String({
    minLength: 1,
    maxLength: 128,
    description: "licensed products only: carried into the download URLs so clients that cannot send headers present it",
  }),
);

// Unknown parameters are ignored, not refused: Sparkle appends its system profile
// (SUEnableSystemProfiling: appName, osVersion, cputype, …) and the delegate's feedParameters to the
// feed URL, and a 400 would fail every update check of such an app. Only the parameters the spec
// names are validated (spec "Update feeds": 400 for an invalid platform, channel or limit).
const IGNORE_UNKNOWN = { additionalProperties: true } as const;

export const FeedQuery = t.Object(
  {
    platform: PlatformSchema,
    channel: t.Optional(ChannelSchema),
    limit: t.Optional(t.QueryInteger({ minimum: 1, maximum: 100, default: 20, description: "Most entries returned (1-100)" })),
    license_key: LicenseKeyQuery,
  },
  IGNORE_UNKNOWN,
);

export const UpgradeQuery = t.Object(
  {
    // Our names, or Tauri's {{target}}-{{arch}} so one tauri.conf.json endpoint serves every build.
    platform: t.Union(
      [
        ...PlatformSchema.anyOf,
        t.Literal("darwin-aarch64"),
        t.Literal("darwin-x86_64"),
        t.Literal("windows-aarch64"),
        t.Literal("windows-x86_64"),
        t.Literal("linux-aarch64"),
        t.Literal("linux-x86_64"),
        t.Literal("linux-armv7"),
      ],
      { description: "Platform: darwin-arm64 … or Tauri's {{target}}-{{arch}} (darwin-aarch64, windows-x86_64, linux-armv7, …)" },
    ),
    channel: t.Optional(ChannelSchema),
    current_version: t.Optional(VersionSchema),
    license_key: LicenseKeyQuery,
  },
  IGNORE_UNKNOWN,
);

export const SlugParams = t.Object({ slug: t.String({ maxLength: 64 }) });

export const FeedJsonEntry = t.Object(
  {
    version: t.String(),
    channel: ChannelSchema,
    pub_date: t.String({ format: "date-time" }),
    notes: t.String(),
    minimum_os_version: t.Union([t.String(), t.Null()]),
    platform: PlatformSchema,
    url: t.String({ format: "uri" }),
    filename: t.String(),
    content_type: t.String(),
    sha256: t.String(),
    size: t.Integer(),
    ed_signature: t.String(),
    minisign_signature: t.String(),
    signing_kid: t.String(),
    critical: t.Boolean(),
    // The feed is an array (spec), so the product's floor is repeated in every entry.
    minimum_supported_version: t.Union([t.String(), t.Null()], { description: "The product's minimum supported version (same in every entry)" }),
    minimum_supported_message: t.Union([t.String(), t.Null()], { description: "Text for users below the floor (same in every entry)" }),
  },
  { title: "FeedEntry" },
);

export const TauriManifest = t.Object(
  {
    version: t.String(),
    pub_date: t.String({ format: "date-time" }),
    url: t.String({ format: "uri" }),
    signature: t.String({ description: "Standard base64 of the whole minisign signature text" }),
    notes: t.String(),
    minimum_supported_version: t.Optional(t.String()),
    minimum_supported_message: t.Optional(t.String()),
  },
  { title: "TauriUpdate" },
);
