import { t } from "../../http/schema";
import { SEMVER_PATTERN } from "../../shared/semver";
import { FeedText } from "../../http/common-schemas";

const Nullable = <T extends ReturnType<typeof t.String>>(s: T) => t.Union([s, t.Null()]);

export const Slug = t.String({
  pattern: "^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$",
  description: "URL-safe identifier used in feed paths: lower-case letters, digits and dashes",
  examples: ["acme-editor"],
});
export const Distribution = t.Union([t.Literal("open"), t.Literal("licensed")], {
  description: "open: feed downloads are public; licensed: feed download redirects require a usable license key",
});
const Version = t.String({ pattern: SEMVER_PATTERN, maxLength: 128, description: "Semantic version" });
// Name and message are shown in every feed (appcast <title>, keyward:minimumSupportedMessage, …).
const Name = FeedText({ minLength: 1, maxLength: 200 });
const Message = FeedText({ maxLength: 2000, description: "Shown to users below minimum_supported_version; embedded in every feed" });

export const ProductSchema = t.Object(
  {
    id: t.String({ format: "uuid" }),
    name: t.String(),
    slug: t.String(),
    distribution: Distribution,
    minimum_supported_version: Nullable(t.String()),
    minimum_supported_message: Nullable(t.String()),
    created_at: t.String({ format: "date-time" }),
    updated_at: t.String({ format: "date-time" }),
  },
  { title: "Product" },
);

export const CreateProductBody = t.Object(
  {
    name: Name,
    slug: Slug,
    distribution: t.Optional(Distribution),
    minimum_supported_version: t.Optional(Nullable(Version)),
    minimum_supported_message: t.Optional(Nullable(Message)),
  },
  { additionalProperties: false },
);

export const UpdateProductBody = t.Object(
  {
    name: t.Optional(Name),
    slug: t.Optional(Slug),
    distribution: t.Optional(Distribution),
    minimum_supported_version: t.Optional(Nullable(Version)),
    minimum_supported_message: t.Optional(Nullable(Message)),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const IdParams = t.Object({ id: t.String({ format: "uuid" }) });

/** Same filter as the plan and add-on lists: a bound key asking for another product gets 403. */
export const ListProductsQuery = t.Object(
  { product_id: t.Optional(t.String({ format: "uuid", description: "Product id (UUID); slugs are not matched" })) },
  { additionalProperties: false },
);
