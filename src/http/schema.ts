// The `t` every route schema is built with: Elysia's, except that `t.Integer` is strict. Elysia 1.4's
// own t.Integer is a transform of `string (format "integer") | integer` that decodes with unary `+`,
// in JSON bodies too: `quantity: "1e1"` consumed 10 units, "0x10" 16, " 7 " 7. A JSON body's integer
// field accepts only a JSON integer. An architecture test keeps `t` from being imported from elysia.
import { t as elysiaT } from "elysia";
import type { IntegerOptions, TInteger } from "@sinclair/typebox";

// TypeBox's Kind symbol (a registered symbol, so the same one Elysia's TypeBox uses).
const Kind = Symbol.for("TypeBox.Kind");

/** A JSON integer, exactly TypeBox's Integer (`Type.Integer`, which Elysia's `t` shadows). */
function Integer(options: IntegerOptions = {}): TInteger {
  return { ...options, [Kind]: "Integer", type: "integer" } as unknown as TInteger;
}

/**
 * An integer in a query string, path or header, where every value is text: Elysia's own t.Integer,
 * which accepts a JSON integer or a string holding one and converts it.
 */
const QueryInteger = elysiaT.Integer;

export const t: Omit<typeof elysiaT, "Integer"> & { Integer: typeof Integer; QueryInteger: typeof QueryInteger } = {
  ...elysiaT,
  Integer,
  QueryInteger,
};
