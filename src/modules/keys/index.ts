import { Elysia, t } from "elysia";
import type { Deps } from "../../deps";
import { Envelope, errors, ok } from "../../http/envelope";

const KeySchema = t.Object({
  kid: t.String({ description: "Key id, carried in tokens as the `kid` claim" }),
  algorithm: t.Literal("ed25519"),
  format: t.Literal("hex"),
  public_key: t.String({ pattern: "^[0-9a-f]{64}$" }),
  status: t.Union([t.Literal("active"), t.Literal("retired")]),
  created_at: t.String({ format: "date-time" }),
  retired_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
});

export function keyRoutes(deps: Deps) {
  return new Elysia({ name: "keyward/keys" })
    .get(
      "/license/pubkey",
      () => ok({ algorithm: "ed25519" as const, format: "hex" as const, public_key: deps.tokenKeys.active().publicKeyHex }),
      {
        response: {
          200: Envelope(
            t.Object({
              algorithm: t.Literal("ed25519"),
              format: t.Literal("hex"),
              public_key: t.String({ pattern: "^[0-9a-f]{64}$", description: "32-byte Ed25519 public key" }),
            }),
          ),
          ...errors(),
        },
        detail: { tags: ["License"], summary: "The active token-signing public key" },
      },
    )
    .get(
      "/license/keys",
      () =>
        ok({
          keys: deps.tokenKeys.list().map((k) => ({
            kid: k.kid,
            algorithm: "ed25519" as const,
            format: "hex" as const,
            public_key: k.publicKeyHex,
            status: k.active ? ("active" as const) : ("retired" as const),
            created_at: k.createdAt.toISOString(),
            retired_at: k.retiredAt?.toISOString() ?? null,
          })),
        }),
      {
        response: { 200: Envelope(t.Object({ keys: t.Array(KeySchema) })), ...errors() },
        detail: {
          tags: ["License"],
          summary: "Every token-signing key clients should still trust (active and retired), for rotation",
        },
      },
    );
}
