// The `t` every route schema is built with: Elysia's, except that `t.Integer` is strict. Elysia 1.4's
// own t.Integer is a transform of `string (format "integer") | integer` that decodes with unary `+`,
// in JSON bodies too: `quantity: "1e1"` consumed 10 units, "0x10" 16, " 7 " 7. A JSON body's integer
// field accepts only a JSON integer. An architecture test keeps `t` from being imported from elysia.
import { t as elysiaT } from "elysia";
import { TypeRegistry, type IntegerOptions, type TInteger, type TSchema, type TUnsafe } from "@sinclair/typebox";

// TypeBox's Kind symbol (a registered symbol, so the same one Elysia's TypeBox uses).
const Kind = Symbol.for("TypeBox.Kind");

/** A JSON integer, exactly TypeBox's Integer (`Type.Integer`, which Elysia's `t` shadows). */
function Integer(options: IntegerOptions = {}): TInteger {
  return { ...options, [Kind]: "Integer", type: "integer" } as unknown as TInteger;
}

/** The TypeBox kind of t.QueryInteger, which the error handler recognizes to word its message. */
export const QUERY_INTEGER_KIND = "KeywardQueryInteger";
/** Plain decimal digits, optionally signed: no exponent ("1e1"), hex ("0x10"), spaces or fraction. */
const DECIMAL_INTEGER = /^-?(0|[1-9][0-9]{0,15})$/;

interface QueryIntegerOptions extends IntegerOptions {
  minimum?: number;
  maximum?: number;
}

function queryIntegerValue(schema: QueryIntegerOptions, value: unknown): number | null {
  const n = typeof value === "string" ? (DECIMAL_INTEGER.test(value) ? Number(value) : NaN) : value;
  if (typeof n !== "number" || !Number.isSafeInteger(n)) return null;
  if (typeof schema.minimum === "number" && n < schema.minimum) return null;
  if (typeof schema.maximum === "number" && n > schema.maximum) return null;
  return n;
}

if (!TypeRegistry.Has(QUERY_INTEGER_KIND)) {
  TypeRegistry.Set(QUERY_INTEGER_KIND, (schema: QueryIntegerOptions, value: unknown) => queryIntegerValue(schema, value) !== null);
}

/** What a query integer must be, for the error's `fields` entry ("an integer from 1 to 100"). */
export function describeQueryInteger(schema: QueryIntegerOptions): string {
  const { minimum: min, maximum: max } = schema;
  if (typeof min === "number" && typeof max === "number") return `must be an integer from ${min} to ${max}`;
  if (typeof min === "number") return `must be an integer of at least ${min}`;
  if (typeof max === "number") return `must be an integer of at most ${max}`;
  return "must be an integer";
}

/**
 * An integer in a query string, where every value is text: decimal digits only, range included in
 * the check itself. Elysia's own t.Integer converted with unary `+` ("1e1" → 10) and checked the
 * range only while converting, where a failure loses the field's name (`fields: {property: …}`);
 * this kind fails the query's validation at its own path (`fields: {limit: …}`), then converts.
 */
function QueryInteger(options: QueryIntegerOptions = {}) {
  const schema = { ...options, [Kind]: QUERY_INTEGER_KIND, type: "integer" } as unknown as TSchema;
  return elysiaT
    .Transform(schema as TUnsafe<number | string>)
    .Decode((value) => queryIntegerValue(options, value) ?? Number.NaN)
    .Encode((value) => value);
}

export const t: Omit<typeof elysiaT, "Integer"> & { Integer: typeof Integer; QueryInteger: typeof QueryInteger } = {
  ...elysiaT,
  Integer,
  QueryInteger,
};

/**
 * A response schema with the headers the API document lists for it (e.g. a redirect's Location):
 * the OpenAPI plugin's own `withHeaders`, here so that routes declaring one load neither the plugin
 * nor the document's builder (http/openapi.ts) at start.
 */
export function withHeaders<S extends object>(schema: S, headers: Record<string, unknown>): S {
  const copy = Object.create(Object.getPrototypeOf(schema), Object.getOwnPropertyDescriptors(schema));
  Object.defineProperty(copy, "headers", { value: headers, enumerable: true, configurable: true, writable: true });
  return copy;
}
