// The spec's envelope (design rule 3): {success: true, data} on success. Only this module builds
// success envelopes; only error-handler.ts builds error bodies.
import type { TSchema } from "elysia";
import { t } from "./schema";

export function ok<T>(data: T): { success: true; data: T } {
  return { success: true, data };
}

export const Envelope = <S extends TSchema>(data: S) =>
  t.Object({ success: t.Literal(true), data }, { additionalProperties: false });

export const ErrorBody = t.Object(
  {
    success: t.Literal(false),
    error: t.Object({
      code: t.String({ description: "Stable machine-readable error code" }),
      message: t.String(),
      details: t.Union([t.Record(t.String(), t.Unknown()), t.Null()]),
    }),
  },
  // No $id: JSON Schema 2020-12 (OpenAPI 3.1) forbids a fragment in $id, and the schema is inlined
  // in every error response, where one $id would be declared many times.
  { title: "Error" },
);

/** Error responses every route can produce, for the OpenAPI document. */
export function errors(...statuses: number[]) {
  const out: Record<number, typeof ErrorBody> = {};
  // Every route may also answer 503 DATABASE_UNAVAILABLE (http/error-handler.ts).
  for (const s of [400, 500, 503, ...statuses]) out[s] = ErrorBody;
  return out;
}

/** Empty success payload for routes whose spec result is just the status code. */
export const Empty = t.Object({}, { additionalProperties: false });
