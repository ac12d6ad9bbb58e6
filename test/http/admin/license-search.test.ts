// GET /admin/licenses at 10M rows (issue 26): `search` dispatches on the term's shape, the new filters
// (email_prefix, email_domain, created_after/before, expiring_before) and their orders page through
// next_cursor, a cursor is refused with another order or filter, and read-only callers can list.
// Runs on SQLite, and on PostgreSQL too when TEST_DATABASE_URL is set.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { pgTestUrl } from "../../support/pg";
import { makeLicense, makePlan, makeProduct } from "../../support/factories";
import type { Plan } from "../../../src/modules/plans/repo";
import type { Product } from "../../../src/modules/products/repo";
import type { License } from "../../../src/modules/licenses/repo";
import { V1, expectError, expectValidation } from "./helpers";

const ENGINES = pgTestUrl() ? (["sqlite", "postgres"] as const) : (["sqlite"] as const);
const DAY = 86_400_000;

for (const engine of ENGINES) {
  describe(`GET /admin/licenses: search, new filters, cursors [${engine}]`, () => {
    let t: TestApp;
    let product: Product;
    let plan: Plan;
    beforeAll(async () => {
      t = await createTestApp({ engine, label: "license-search" });
      product = await makeProduct(t.deps);
      plan = await makePlan(t.deps, product.id);
    });
    afterAll(() => t.close());

    /** A product of its own per test, so tests do not see each other's licenses. */
    const fresh = async () => {
      const p = await makeProduct(t.deps);
      return { p, pl: await makePlan(t.deps, p.id) };
    };
    const list = (q: string, key?: string) => t.request("GET", `${V1}/admin/licenses?${q}`, key ? { key } : {});
    const ids = async (q: string) => {
      const res = await list(q);
      expect({ q, status: res.status, error: res.body.error }).toEqual({ q, status: 200, error: undefined });
      return res.body.data.items.map((i: any) => i.id) as string[];
    };
    /** Every page of `q` at `limit`, following next_cursor. */
    const walk = async (q: string, limit: number) => {
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let pages = 0; pages < 50; pages++) {
        const res = await list(`${q}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
        expect(res.status).toBe(200);
        seen.push(...res.body.data.items.map((i: any) => i.id));
        cursor = res.body.data.next_cursor;
        if (!cursor) return seen;
      }
      throw new Error("did not end");
    };

    test("search: a key, an id, @domain, an address, a key hint, external ids, an email prefix; never a substring", async () => {
      const { p, pl } = await fresh();
      const mk = (over: Parameters<typeof makeLicense>[1] extends infer I ? Partial<I> : never) => makeLicense(t.deps, { productId: p.id, planId: pl.id, ...over });
      const a = await mk({ email: "Alice.Smith@Example.com", externalCustomerId: "cus_A" });
      const b = await mk({ email: "bob@example.com", externalWorkspaceId: "ws_b" });
      const c = await mk({ email: "carol@other.test", externalCustomerId: "bob" });
      const s = (term: string) => ids(`product_id=${p.id}&search=${encodeURIComponent(term)}`);

      expect(await s(`  ${a.key.toLowerCase()} `)).toEqual([a.license.id]);
      expect(await s(b.license.id.toUpperCase())).toEqual([b.license.id]);
      expect((await s("@EXAMPLE.com")).sort()).toEqual([a.license.id, b.license.id].sort());
      expect(await s("alice.smith@example.COM")).toEqual([a.license.id]);
      expect(await s("smith@example.com")).toEqual([]); // an address matches exactly
      expect(await s(c.key.slice(-4).toLowerCase())).toContain(c.license.id); // key hint, any case
      expect(await s("cus_A")).toEqual([a.license.id]);
      expect(await s("cus_a")).toEqual([]); // external ids are exact
      expect(await s("ws_b")).toEqual([b.license.id]);
      // "bob" is carol's external customer id: that branch answers before the email prefix.
      expect(await s("bob")).toEqual([c.license.id]);
      expect(await s("ALICE.S")).toEqual([a.license.id]); // email prefix, A-Z folded
      // Not a substring search (it was a full scan at 1M licenses).
      expect(await s("EXAMPLE.COM")).toEqual([]);
      expect(await s("smith")).toEqual([]);
      expect(await s("%")).toEqual([]);
    });

    test("search pages stay in the branch the first page chose", async () => {
      const { p, pl } = await fresh();
      const made: string[] = [];
      for (let i = 0; i < 5; i++) {
        t.clock.advance(1000);
        made.push((await makeLicense(t.deps, { productId: p.id, planId: pl.id, externalCustomerId: "cus_many", email: `m${i}@x.test` })).license.id);
      }
      expect(await walk(`product_id=${p.id}&search=cus_many`, 2)).toEqual([...made].reverse());
      // Email-prefix branch: its own order (email, then created_at, id, ascending).
      expect(await walk(`product_id=${p.id}&search=m`, 2)).toEqual(made);
    });

    test("email_prefix, email_domain and a created range; each order pages through ties", async () => {
      const { p, pl } = await fresh();
      t.clock.advance(DAY);
      const start = t.clock.now();
      const made: License[] = [];
      for (let i = 0; i < 7; i++) {
        if (i % 3 === 0) t.clock.advance(1000); // created_at ties in threes
        made.push((await makeLicense(t.deps, { productId: p.id, planId: pl.id, email: ["zed@Acme.test", "Zoe@acme.test", "zed@beta.test"][i % 3]! })).license);
      }
      const newest = [...made].sort((x, y) => y.createdAt.getTime() - x.createdAt.getTime() || (x.id < y.id ? 1 : -1)).map((l) => l.id);
      expect(await walk(`product_id=${p.id}`, 2)).toEqual(newest);
      expect(await walk(`product_id=${p.id}&email_domain=%40ACME.test`, 2)).toEqual(newest.filter((id) => !made.find((l) => l.id === id)!.email.endsWith("beta.test")));
      const byEmail = [...made].sort((x, y) => {
        const [ex, ey] = [x.email.toLowerCase(), y.email.toLowerCase()];
        return ex < ey ? -1 : ex > ey ? 1 : x.createdAt.getTime() - y.createdAt.getTime() || (x.id < y.id ? -1 : 1);
      });
      expect(await walk(`product_id=${p.id}&email_prefix=Z`, 2)).toEqual(byEmail.map((l) => l.id));
      expect(await walk(`product_id=${p.id}&email_prefix=zed%40`, 1)).toEqual(byEmail.filter((l) => l.email.startsWith("zed@")).map((l) => l.id));
      const after = new Date(start.getTime() + 2000).toISOString();
      expect(await walk(`product_id=${p.id}&created_after=${after}`, 2)).toEqual(newest.filter((id) => made.find((l) => l.id === id)!.createdAt.getTime() >= start.getTime() + 2000));
      expect(await walk(`product_id=${p.id}&created_before=${after}`, 2)).toEqual(newest.filter((id) => made.find((l) => l.id === id)!.createdAt.getTime() < start.getTime() + 2000));
    });

    test("expiring_before: soonest first by valid_until then id, none without an expiry, with status", async () => {
      const { p, pl } = await fresh();
      const base = t.clock.now().getTime() + 30 * DAY;
      const made: License[] = [];
      for (let i = 0; i < 7; i++) {
        const validUntil = i === 6 ? null : new Date(base + Math.floor(i / 2) * DAY); // ties in twos
        made.push((await makeLicense(t.deps, { productId: p.id, planId: pl.id, validUntil })).license);
      }
      await t.request("POST", `${V1}/admin/licenses/${made[1]!.id}/suspend`);
      const soonest = made
        .filter((l) => l.validUntil && l.validUntil.getTime() <= base + 2 * DAY)
        .sort((x, y) => x.validUntil!.getTime() - y.validUntil!.getTime() || (x.id < y.id ? -1 : 1))
        .map((l) => l.id);
      const before = new Date(base + 2 * DAY).toISOString();
      expect(await walk(`product_id=${p.id}&expiring_before=${before}`, 2)).toEqual(soonest);
      expect(await walk(`product_id=${p.id}&status=active&expiring_before=${before}`, 1)).toEqual(soonest.filter((id) => id !== made[1]!.id));
      // The plan narrows to its product's range.
      expect(await walk(`plan_id=${pl.id}&expiring_before=${before}`, 3)).toEqual(soonest);
    });

    test("a cursor is refused (400) with another order, filter or search; garbage too; the old {t, id} form still reads newest first", async () => {
      const { p, pl } = await fresh();
      for (let i = 0; i < 3; i++) await makeLicense(t.deps, { productId: p.id, planId: pl.id, validUntil: new Date(t.clock.now().getTime() + (i + 1) * DAY), externalCustomerId: "cus_c", email: `c${i}@c.test` });
      const cursorOf = async (q: string) => (await list(`${q}&limit=1`)).body.data.next_cursor as string;
      const newest = await cursorOf(`product_id=${p.id}`);
      const expiring = await cursorOf(`product_id=${p.id}&expiring_before=9999-01-01T00:00:00Z`);
      const prefix = await cursorOf(`product_id=${p.id}&email_prefix=c`);
      const search = await cursorOf(`product_id=${p.id}&search=cus_c`);
      const refused = async (q: string, cursor: string) => expectValidation(await list(`${q}&cursor=${encodeURIComponent(cursor)}`), "cursor");
      await refused(`product_id=${p.id}&expiring_before=9999-01-01T00:00:00Z`, newest);
      await refused(`product_id=${p.id}`, expiring);
      await refused(`product_id=${p.id}`, prefix);
      await refused(`product_id=${p.id}&email_prefix=c`, newest);
      await refused(`product_id=${p.id}&status=active`, newest); // another filter
      await refused(`product_id=${product.id}`, newest);
      await refused(`product_id=${p.id}&search=c`, search); // another term
      await refused(`product_id=${p.id}`, search);
      await refused(`product_id=${p.id}`, "not-a-cursor");
      await refused(`product_id=${p.id}`, Buffer.from(JSON.stringify({ o: "sideways", f: "x", t: 1, id: "a" })).toString("base64url"));
      // Each still works where it belongs.
      for (const [q, c] of [
        [`product_id=${p.id}`, newest],
        [`product_id=${p.id}&expiring_before=9999-01-01T00:00:00Z`, expiring],
        [`product_id=${p.id}&email_prefix=c`, prefix],
        [`product_id=${p.id}&search=cus_c`, search],
      ] as const) {
        expect((await list(`${q}&limit=1&cursor=${encodeURIComponent(c)}`)).status).toBe(200);
      }
      // A cursor issued before cursors named their order: newest first, as it always meant.
      const first = (await list(`product_id=${p.id}&limit=1`)).body.data.items[0];
      const legacy = Buffer.from(JSON.stringify({ t: Date.parse(first.created_at), id: first.id })).toString("base64url");
      const res = await list(`product_id=${p.id}&limit=5&cursor=${legacy}`);
      expect(res.status).toBe(200);
      expect(res.body.data.items.map((i: any) => i.id)).not.toContain(first.id);
      expect(res.body.data.items.length).toBe(2);
    });

    test("validation: bad instants, combinations that have no index, unknown parameters", async () => {
      expectValidation(await list("created_after=yesterday"), "created_after");
      expectValidation(await list("created_before=2026-02-30T00:00:00Z"), "created_before");
      expectValidation(await list("expiring_before=2026-01-01"), "expiring_before"); // no time zone
      expectValidation(await list("expiring_before=2026-01-01T00:00:00Z&search=bob"), "expiring_before");
      expectValidation(await list("expiring_before=2026-01-01T00:00:00Z&email_domain=x.test"), "expiring_before");
      expectValidation(await list("expiring_before=2026-01-01T00:00:00Z&email_prefix=a"), "expiring_before");
      expectValidation(await list("email_prefix=a&search=bob"), "email_prefix");
      expectValidation(await list("email_prefix="), "email_prefix");
      expectValidation(await list("sort=email"));
      expectValidation(await list("total=true"));
    });

    test("a page reads each plan it shows once, not once per license (50 reads were 4 ms of the event loop)", async () => {
      const { p, pl } = await fresh();
      const other = await makePlan(t.deps, p.id);
      for (let i = 0; i < 12; i++) await makeLicense(t.deps, { productId: p.id, planId: i % 3 ? pl.id : other.id });
      const plans = t.deps.repos.plans;
      const original = plans.findById;
      const read: string[] = [];
      plans.findById = (id: string) => {
        read.push(id);
        return original.call(plans, id);
      };
      try {
        const res = await list(`product_id=${p.id}&limit=50`);
        expect(res.status).toBe(200);
        expect(res.body.data.items).toHaveLength(12);
        expect(new Set(res.body.data.items.map((i: any) => i.plan_name))).toEqual(new Set([pl.name, other.name]));
      } finally {
        plans.findById = original;
      }
      expect(read.sort()).toEqual([pl.id, other.id].sort());
    });

    test("read-only callers list: a `read` API key and a viewer session; releases:write cannot", async () => {
      await makeLicense(t.deps, { productId: product.id, planId: plan.id });
      expect((await list(`product_id=${product.id}`, await t.apiKey(["read"]))).status).toBe(200);
      const cookie = await t.signIn("viewer@keyward.test", { role: "viewer" });
      const viewed = await t.request("GET", `${V1}/admin/licenses?product_id=${product.id}&search=%40example.com`, { cookie });
      expect(viewed.status).toBe(200);
      expect(viewed.body.data.items.length).toBeGreaterThan(0);
      expectError(await list(`product_id=${product.id}`, await t.apiKey(["releases:write"])), 403, "INSUFFICIENT_SCOPE");
    });
  });
}
