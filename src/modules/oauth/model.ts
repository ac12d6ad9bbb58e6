import { t } from "../../http/schema";
import { RETURN_TO_MAX } from "./domain";

export const ProviderParams = t.Object({
  provider: t.String({ maxLength: 64, description: "`github`, `google` or `oidc` (only enabled providers answer)" }),
});

export const ProviderList = t.Object(
  {
    providers: t.Array(
      t.Object({
        id: t.Union([t.Literal("github"), t.Literal("google"), t.Literal("oidc")]),
        name: t.String({ description: "Button label (OIDC_NAME for the OpenID Connect provider)" }),
        start_url: t.String({ format: "uri", description: "Send the browser here; append `?return_to=/path` to come back there" }),
      }),
    ),
  },
  { title: "SignInProviders" },
);

export const StartQuery = t.Object({
  return_to: t.Optional(
    t.String({ maxLength: RETURN_TO_MAX, description: "Path on this site to land on after signing in (`/…`, not `//…` or an absolute URL). Default `/`" }),
  ),
});

// Providers add parameters of their own to the callback (Google: scope, authuser, prompt, hd), so
// unknown ones are allowed here, unlike everywhere else.
export const CallbackQuery = t.Object(
  {
    code: t.Optional(t.String({ maxLength: 4096, description: "Authorization code" })),
    state: t.Optional(t.String({ maxLength: 512 })),
    error: t.Optional(t.String({ maxLength: 256, description: "Set by the provider when the user declined or the request was refused" })),
    error_description: t.Optional(t.String({ maxLength: 4096 })),
    iss: t.Optional(t.String({ maxLength: 2048, description: "RFC 9207 issuer identifier (checked for the OpenID Connect provider)" })),
  },
  { additionalProperties: true },
);
