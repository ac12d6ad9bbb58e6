// Structured JSON logs, one object per line. Known secret-bearing fields are redacted at any depth.
import type { LogLevel } from "../config";

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };
const SECRET_FIELD = /(license_?key|authorization|token|secret|password|private|api_?key|seed|cookie)/i;

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** Whether a line of this level would be written (lets hot paths skip building it). */
  enabled(level: Exclude<LogLevel, "silent">): boolean;
}

export function redact(value: unknown, depth = 0): unknown {
  if (depth > 6 || value === null || typeof value !== "object") return value;
  if (value instanceof Error) return describeError(value, depth);
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = SECRET_FIELD.test(k) ? "[redacted]" : redact(v, depth + 1);
  }
  return out;
}

/**
 * An error as logged: name, message, stack, the driver's error code, and its cause. drizzle wraps
 * every failed statement in a DrizzleQueryError whose message (and so its stack) is the SQL followed
 * by the statement's parameter values (emails, addresses, identifiers, ciphertexts), and whose cause
 * holds the only useful part, the database's reason: logged as the SQL and the cause, without values.
 */
function describeError(error: Error, depth: number): Record<string, unknown> {
  let { message, stack } = error;
  const query = (error as { query?: unknown }).query;
  if (typeof query === "string" && "params" in error) {
    const safe = `Failed query: ${query}`;
    // A function, not a string: the SQL holds $1, $2 … and could hold $& or $$, which replace() would expand.
    stack = stack?.replace(message, () => safe);
    message = safe;
  }
  const out: Record<string, unknown> = { name: error.name, message, stack };
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" || typeof code === "number") out.code = code;
  if (error.cause !== undefined) out.cause = redact(error.cause, depth + 1);
  return out;
}

export function createLogger(level: LogLevel, sink: (line: string) => void = (l) => process.stdout.write(l + "\n"), now: () => Date = () => new Date(0)): Logger {
  const min = ORDER[level];
  const emit = (lvl: Exclude<LogLevel, "silent">, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < min) return;
    sink(JSON.stringify({ time: now().toISOString(), level: lvl, msg, ...(redact(fields ?? {}) as object) }));
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    enabled: (lvl) => ORDER[lvl] >= min,
  };
}
