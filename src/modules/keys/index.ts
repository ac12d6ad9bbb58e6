import { Elysia } from "elysia";
import { t } from "../../http/schema";
import type { Deps } from "../../deps";
import { Envelope, errors, ok } from "../../http/envelope";
import { PubkeySchema, TrustedKeySchema } from "./model";
import { presentPubkey, presentTrustedKey } from "./present";

export function keyRoutes(deps: Deps) {
  return new Elysia({ name: "keyward/keys" })
    .get("/license/pubkey", () => ok(presentPubkey(deps.tokenKeys.active())), {
      response: { 200: Envelope(PubkeySchema), ...errors() },
      detail: {
        tags: ["License"],
        summary: "The active token-signing public key, as hex and SPKI PEM, with its kid",
      },
    })
    .get("/license/keys", async () => ok({ keys: (await deps.tokenKeys.list()).map(presentTrustedKey) }), {
      response: { 200: Envelope(t.Object({ keys: t.Array(TrustedKeySchema) })), ...errors() },
      detail: {
        tags: ["License"],
        summary: "Every token-signing key clients should still trust (active and retired), for rotation",
      },
    });
}
