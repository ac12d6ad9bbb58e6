// Shared helpers for the admin catalog and license HTTP tests.
import { expect } from "bun:test";
import type { TestApp, TestResponse } from "../../support/app";

export const V1 = "/api/v1";

/** Asserts a 400 VALIDATION_ERROR naming (at least) the given fields in details.fields. */
export function expectValidation(res: TestResponse, ...fields: string[]): void {
  expect(res.status).toBe(400);
  expect(res.body.success).toBe(false);
  expect(res.body.error.code).toBe("VALIDATION_ERROR");
  const named = Object.keys(res.body.error.details?.fields ?? {});
  const missing = fields.filter((f) => !named.some((n) => n === f || n.startsWith(`${f}.`)));
  expect({ missing, named }).toEqual({ missing: [], named });
}

export function expectError(res: TestResponse, status: number, code: string): void {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
}

/** The audit rows about one entity, newest first. */
export async function auditFor(t: TestApp, entityId: string): Promise<any[]> {
  const res = await t.request("GET", `${V1}/admin/audit?entity_id=${entityId}&limit=200`);
  expect(res.status).toBe(200);
  return res.body.data.items;
}

/** The newest audit row of `action` about `entityId`; fails when there is none. */
export async function lastAudit(t: TestApp, entityId: string, action: string): Promise<any> {
  const row = (await auditFor(t, entityId)).find((r) => r.action === action);
  expect(row).toBeDefined();
  return row;
}
