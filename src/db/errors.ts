// Translates SQLite constraint failures into domain errors; repo.sqlite.ts files use these helpers.
import { AppError } from "../shared/errors";

export function isUniqueViolation(e: unknown): boolean {
  const err = e as { code?: string; message?: string } | null;
  return !!err && (err.code === "SQLITE_CONSTRAINT_UNIQUE" || err.code === "SQLITE_CONSTRAINT_PRIMARYKEY" || /UNIQUE constraint failed/.test(err.message ?? ""));
}

export function isForeignKeyViolation(e: unknown): boolean {
  const err = e as { code?: string; message?: string } | null;
  return !!err && (err.code === "SQLITE_CONSTRAINT_FOREIGNKEY" || /FOREIGN KEY constraint failed/.test(err.message ?? ""));
}

export function rethrowConstraint(e: unknown, messages: { unique?: string; foreignKey?: string }): never {
  if (messages.unique && isUniqueViolation(e)) throw new AppError("CONFLICT", { message: messages.unique });
  if (messages.foreignKey && isForeignKeyViolation(e)) throw new AppError("CONFLICT", { message: messages.foreignKey });
  throw e;
}
