import { expect, test } from "bun:test";
import { DrizzleQueryError } from "drizzle-orm/errors";
import { createLogger } from "./logger";

function logged(fields: Record<string, unknown>): { text: string; line: Record<string, any> } {
  const lines: string[] = [];
  createLogger("error", (l) => lines.push(l)).error("unhandled error", fields);
  return { text: lines[0]!, line: JSON.parse(lines[0]!) };
}

test("a failed statement is logged with its SQL and the database's reason and code, never its parameter values", () => {
  const reason = Object.assign(new Error('duplicate key value violates unique constraint "users_email_unique"'), { code: "23505", name: "PostgresError" });
  const error = new DrizzleQueryError('insert into "users" ("id", "email") values ($1, $2)', ["0190-id", "owner@example.com"], reason);
  const { text, line } = logged({ error });
  expect(text).not.toContain("owner@example.com");
  expect(text).not.toContain("0190-id");
  expect(line.error.message).toBe('Failed query: insert into "users" ("id", "email") values ($1, $2)');
  expect(line.error.stack).toContain("Failed query:");
  expect(line.error.cause).toMatchObject({ name: "PostgresError", code: "23505", message: 'duplicate key value violates unique constraint "users_email_unique"' });
});

test("the SQL is logged as written, $-sequences included", () => {
  const query = "select $$a$$ || $& || $' from t where id = $1";
  const { line } = logged({ error: new DrizzleQueryError(query, ["secret-value"], new Error("boom")) });
  expect(line.error.message).toBe(`Failed query: ${query}`);
  expect(line.error.stack).toContain(`Failed query: ${query}`);
  expect(JSON.stringify(line)).not.toContain("secret-value");
});

test("other errors keep their message, stack and cause", () => {
  const { line } = logged({ error: new Error("outer", { cause: new Error("inner") }) });
  expect(line.error).toMatchObject({ name: "Error", message: "outer", cause: { name: "Error", message: "inner" } });
  expect(line.error.stack).toContain("outer");
});
