import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { makeLicense, makePlan, makeProduct } from "../../support/factories";
import { activations } from "../../../src/db/schema";
import { newId } from "../../../src/shared/ids";
import { SYSTEM_ACTOR } from "../../../src/shared/actor";
import type { LicenseStatus } from "../../../src/modules/licenses/repo";
import type { Plan } from "../../../src/modules/plans/repo";
import type { Product } from "../../../src/modules/products/repo";
import { V1, auditFor, expectError, expectValidation, lastAudit } from "./helpers";
import { changeLicenseNow } from "../../support/license-change";

let t: TestApp;
let product: Product;
let plan: Plan;
beforeAll(async () => {
  t = await createTestApp();
  product = await makeProduct(t.deps);
  plan = await makePlan(t.deps, product.id);
});
afterAll(() => t.close());

const ALL: LicenseStatus[] = ["active", "trialing", "past_due", "canceled", "expired", "suspended", "revoked"];
type Action = "revoke" | "suspend" | "reinstate";

// DECISIONS "License states": the expected result of each (state, action) over HTTP; null = 409.
const TABLE: Record<LicenseStatus, Record<Action, LicenseStatus | null>> = {
  active: { revoke: "revoked", suspend: "suspended", reinstate: null },
  trialing: { revoke: "revoked", suspend: "suspended", reinstate: null },
  past_due: { revoke: "revoked", suspend: "suspended", reinstate: null },
  canceled: { revoke: "revoked", suspend: null, reinstate: "active" },
  expired: { revoke: "revoked", suspend: null, reinstate: "active" },
  suspended: { revoke: "revoked", suspend: null, reinstate: "active" },
  revoked: { revoke: null, suspend: null, reinstate: null },
};

/** A fresh license put into `status` directly (states like past_due have no admin route leading to them). */
async function licenseIn(status: LicenseStatus) {
  const { license, key } = await makeLicense(t.deps, { productId: product.id, planId: plan.id, validUntil: new Date("2027-01-01T00:00:00Z") });
  if (status !== "active") {
    await changeLicenseNow(t.deps, license.id, () => ({ status, priorStatus: null }), t.clock.now(), () => ({
      audit: {
        actor: SYSTEM_ACTOR,
        action: "test.setup",
        entityType: "license",
        entityId: license.id,
        productId: product.id,
        changes: null,
        at: t.clock.now(),
      },
    }));
  }
  return { license, key };
}

async function addActivation(licenseId: string, identifier: string) {
  await t.exec("INSERT INTO activations (id, license_id, identifier, identifier_type, label, created_at, last_seen_at) VALUES ($1, $2, $3, 'device', NULL, $4, NULL)", [
    newId(),
    licenseId,
    identifier,
    t.clock.now(),
  ]);
}

const act = (id: string, action: Action) => t.request("POST", `${V1}/admin/licenses/${id}/${action}`);

describe("transition table over HTTP", () => {
  for (const from of ALL) {
    for (const action of ["revoke", "suspend", "reinstate"] as Action[]) {
      const expected = TABLE[from][action];
      test(`${action} from ${from} → ${expected ?? "409 INVALID_TRANSITION"}`, async () => {
        const { license } = await licenseIn(from);
        const res = await act(license.id, action);
        if (expected === null) {
          expectError(res, 409, "INVALID_TRANSITION");
          expect(res.body.error.details).toEqual({ from, action });
          const after = await t.request("GET", `${V1}/admin/licenses/${license.id}`);
          expect(after.body.data.status).toBe(from);
          expect((await auditFor(t, license.id)).some((r) => r.action === `license.${action}`)).toBe(false);
        } else {
          expect(res.status).toBe(200);
          expect(res.body.data.status).toBe(expected);
          const row = await lastAudit(t, license.id, `license.${action}`);
          expect(row.changes).toEqual({ before: { status: from }, after: { status: expected } });
          expect(row.actor_type).toBe("api_key");
          expect(row.ip).toBeTruthy();
          expect(row.request_id).toBe(res.headers.get("x-request-id"));
        }
      });
    }
  }

  test("suspend → reinstate returns to the state before the suspension", async () => {
    for (const prior of ["active", "trialing", "past_due"] as LicenseStatus[]) {
      const { license } = await licenseIn(prior);
      expect((await act(license.id, "suspend")).body.data.status).toBe("suspended");
      expect((await act(license.id, "reinstate")).body.data.status).toBe(prior);
    }
  });

  test("revoked is terminal: every action and edit afterwards is 409", async () => {
    const other = await makePlan(t.deps, product.id);
    const { license } = await licenseIn("active");
    expect((await act(license.id, "revoke")).status).toBe(200);
    for (const action of ["revoke", "suspend", "reinstate"] as Action[]) expectError(await act(license.id, action), 409, "INVALID_TRANSITION");
    expectError(await t.request("POST", `${V1}/admin/licenses/${license.id}/change-plan`, { body: { plan_id: other.id } }), 409, "INVALID_TRANSITION");
    expectError(await t.request("POST", `${V1}/admin/licenses/${license.id}/valid-until`, { body: { valid_until: null } }), 409, "INVALID_TRANSITION");
    expectError(await t.request("POST", `${V1}/admin/licenses/${license.id}/support-until`, { body: { support_until: null } }), 409, "INVALID_TRANSITION");
    expect((await t.request("GET", `${V1}/admin/licenses/${license.id}`)).body.data).toMatchObject({ status: "revoked", plan_id: plan.id });
  });

  test("revoke drops the activations; suspend keeps them", async () => {
    const { license } = await licenseIn("active");
    await addActivation(license.id, "dev-1");
    await addActivation(license.id, "dev-2");
    const suspended = await act(license.id, "suspend");
    expect(suspended.body.data.activations.length).toBe(2);
    const revoked = await act(license.id, "revoke");
    expect(revoked.body.data.activations).toEqual([]);
    expect((await t.request("GET", `${V1}/admin/licenses/${license.id}`)).body.data.activations).toEqual([]);
  });

  test("unknown license is 404; a malformed id is 400", async () => {
    expectError(await act("01890000-0000-7000-8000-000000000000", "suspend"), 404, "NOT_FOUND");
    expectValidation(await act("nope", "suspend"), "id");
  });
});

describe("change-plan", () => {
  test("moves to another plan of the product; status and dates unchanged; audited", async () => {
    const target = await makePlan(t.deps, product.id, { name: "Bigger", graceDays: 7 });
    const { license } = await licenseIn("trialing");
    const res = await t.request("POST", `${V1}/admin/licenses/${license.id}/change-plan`, { body: { plan_id: target.id } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ plan_id: target.id, plan_name: "Bigger", grace_days: 7, status: "trialing", valid_until: "2027-01-01T00:00:00.000Z" });
    const row = await lastAudit(t, license.id, "license.change_plan");
    expect(row.changes).toEqual({ before: { plan_id: plan.id }, after: { plan_id: target.id } });
  });

  test("a plan of another product, an unknown plan or a bad body is 400", async () => {
    const { license } = await licenseIn("active");
    const foreign = await makePlan(t.deps, (await makeProduct(t.deps)).id);
    const change = (body: unknown) => t.request("POST", `${V1}/admin/licenses/${license.id}/change-plan`, { body });
    expectValidation(await change({ plan_id: foreign.id }), "plan_id");
    expectValidation(await change({ plan_id: "01890000-0000-7000-8000-000000000000" }), "plan_id");
    expectValidation(await change({}), "plan_id");
    expectValidation(await change({ plan_id: "basic" }), "plan_id");
    expectValidation(await change({ plan_id: plan.id, status: "active" }));
    expect((await t.request("GET", `${V1}/admin/licenses/${license.id}`)).body.data.plan_id).toBe(plan.id);
    expectError(
      await t.request("POST", `${V1}/admin/licenses/01890000-0000-7000-8000-000000000000/change-plan`, { body: { plan_id: plan.id } }),
      404,
      "NOT_FOUND",
    );
  });
});

describe("valid-until and support-until", () => {
  test("set and clear the expiry; audited with before/after", async () => {
    const { license } = await licenseIn("active");
    const set = await t.request("POST", `${V1}/admin/licenses/${license.id}/valid-until`, { body: { valid_until: "2028-03-01T10:00:00-05:00" } });
    expect(set.status).toBe(200);
    expect(set.body.data.valid_until).toBe("2028-03-01T15:00:00.000Z");
    expect((await lastAudit(t, license.id, "license.set_valid_until")).changes).toEqual({
      before: { valid_until: "2027-01-01T00:00:00.000Z" },
      after: { valid_until: "2028-03-01T15:00:00.000Z" },
    });
    const cleared = await t.request("POST", `${V1}/admin/licenses/${license.id}/valid-until`, { body: { valid_until: null } });
    expect(cleared.body.data.valid_until).toBeNull();
    // Setting an expiry never changes the status (reinstate is the separate, explicit action).
    expect(cleared.body.data.status).toBe("active");
  });

  test("a trial keeps an expiry; bad bodies are 400", async () => {
    const { license } = await licenseIn("trialing");
    const post = (body: unknown) => t.request("POST", `${V1}/admin/licenses/${license.id}/valid-until`, { body });
    expectValidation(await post({ valid_until: null }), "valid_until");
    expectValidation(await post({}), "valid_until");
    expectValidation(await post({ valid_until: "2027-13-01T00:00:00Z" }), "valid_until");
    expectValidation(await post({ valid_until: "2027-02-29T00:00:00Z" }), "valid_until");
    expectValidation(await post({ valid_until: 1767225600 }), "valid_until");
    expect((await post({ valid_until: "2028-02-29T00:00:00Z" })).status).toBe(200);
    // A suspended trial returns to trialing on reinstate, so it also keeps its expiry.
    await act(license.id, "suspend");
    expectValidation(await post({ valid_until: null }), "valid_until");
  });

  test("instants outside years 1-9999 (UTC) are 400 on every route that takes one; both ends are stored and read back exactly", async () => {
    // Before the fix each was stored on SQLite (and read back as "-000001-…" or "+010000-…", not RFC
    // 3339) and answered 500 on PostgreSQL, which refuses year 0 and six-digit years.
    const { license } = await licenseIn("active");
    const outside = ["0000-01-01T00:00:00Z", "0000-12-31T23:59:59+14:00", "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-14:00", "9999-12-31T23:59:59.999-00:01"];
    for (const at of outside) {
      expectValidation(await t.request("POST", `${V1}/admin/licenses/${license.id}/valid-until`, { body: { valid_until: at } }), "valid_until");
      expectValidation(await t.request("POST", `${V1}/admin/licenses/${license.id}/support-until`, { body: { support_until: at } }), "support_until");
      expectValidation(await t.request("POST", `${V1}/admin/licenses/${license.id}/offline-token`, { body: { identifier: "m-1", expires_at: at } }), "expires_at");
      const create = { product_id: license.productId, plan_id: license.planId, email: "far@example.com" };
      expectValidation(await t.request("POST", `${V1}/admin/licenses`, { body: { ...create, valid_until: at } }), "valid_until");
      expectValidation(await t.request("POST", `${V1}/admin/licenses`, { body: { ...create, support_until: at } }), "support_until");
    }
    const first = "0001-01-01T00:00:00.000Z";
    const last = "9999-12-31T23:59:59.999Z";
    const set = await t.request("POST", `${V1}/admin/licenses/${license.id}/valid-until`, { body: { valid_until: "0001-01-01T01:00:00+01:00" } });
    expect(set.status).toBe(200);
    expect(set.body.data.valid_until).toBe(first);
    const support = await t.request("POST", `${V1}/admin/licenses/${license.id}/support-until`, { body: { support_until: "9999-12-31T23:59:59.9999Z" } });
    expect(support.body.data.support_until).toBe(last);
    const read = (await t.request("GET", `${V1}/admin/licenses/${license.id}`)).body.data;
    expect({ valid_until: read.valid_until, support_until: read.support_until }).toEqual({ valid_until: first, support_until: last });
  });

  test("set and clear the support window", async () => {
    const { license } = await licenseIn("active");
    const post = (body: unknown) => t.request("POST", `${V1}/admin/licenses/${license.id}/support-until`, { body });
    const set = await post({ support_until: "2027-11-21T08:00:00Z" });
    expect(set.status).toBe(200);
    expect(set.body.data.support_until).toBe("2027-11-21T08:00:00.000Z");
    expect((await lastAudit(t, license.id, "license.set_support_until")).changes).toEqual({
      before: { support_until: null },
      after: { support_until: "2027-11-21T08:00:00.000Z" },
    });
    expect((await post({ support_until: null })).body.data.support_until).toBeNull();
    expectValidation(await post({ support_until: "soon" }), "support_until");
    expectValidation(await post({ valid_until: null }));
    expectError(
      await t.request("POST", `${V1}/admin/licenses/01890000-0000-7000-8000-000000000000/support-until`, { body: { support_until: null } }),
      404,
      "NOT_FOUND",
    );
  });
});
