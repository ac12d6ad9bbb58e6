// Translates constraint failures of either engine into domain errors; repo.sqlite.ts and repo.pg.ts
// files use these helpers. drizzle wraps driver errors (DrizzleQueryError), so the cause chain is
// searched: SQLite reports SQLITE_CONSTRAINT_* codes, PostgreSQL SQLSTATE 23505 / 23503.
import { AppError } from "../shared/errors";

interface DriverError {
  code?: string;
  message?: string;
  cause?: unknown;
}

function causes(e: unknown): DriverError[] {
  const out: DriverError[] = [];
  let cur = e as DriverError | null | undefined;
  for (let i = 0; cur && typeof cur === "object" && i < 5; i++) {
    out.push(cur);
    cur = cur.cause as DriverError | undefined;
  }
  return out;
}

export function isUniqueViolation(e: unknown): boolean {
  return causes(e).some(
    (err) =>
      err.code === "SQLITE_CONSTRAINT_UNIQUE" ||
      err.code === "SQLITE_CONSTRAINT_PRIMARYKEY" ||
      err.code === "23505" ||
      /UNIQUE constraint failed/.test(err.message ?? ""),
  );
}

export function isForeignKeyViolation(e: unknown): boolean {
  return causes(e).some(
    (err) => err.code === "SQLITE_CONSTRAINT_FOREIGNKEY" || err.code === "23503" || /FOREIGN KEY constraint failed/.test(err.message ?? ""),
  );
}

export function rethrowConstraint(e: unknown, messages: { unique?: string; foreignKey?: string }): never {
  if (messages.unique && isUniqueViolation(e)) throw new AppError("CONFLICT", { message: messages.unique });
  if (messages.foreignKey && isForeignKeyViolation(e)) throw new AppError("CONFLICT", { message: messages.foreignKey });
  throw e;
}
