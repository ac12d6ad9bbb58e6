// Seat limits and invite tokens across several Keyward processes on one database, on each engine
// (SQLite file; PostgreSQL with TEST_DATABASE_URL). Guards the bug where two adds each count 4 of 5
// seats and both insert (the count and the insert must be one transaction with the license locked),
// and the one where two accepts of one token both succeed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { engines } from "../contract/harness";
import { makeLicense, makePlan, makeProduct } from "../support/factories";
import { all, postJson, tally } from "./support";
import { startCluster, type Cluster } from "./cluster";
import { invites, lastToken } from "../http/portal/helpers";

const NODES = 3;

for (const engine of engines()) {
  describe(`seats on ${NODES} nodes on ${engine}`, () => {
    let c: Cluster;
    beforeAll(async () => {
      c = await startCluster(engine, NODES);
    }, 60_000);
    afterAll(() => c?.close());

    async function ownedLicense(maxSeats: number | null) {
      const owner = `owner-${Math.random().toString(36).slice(2)}@example.com`;
      const product = await makeProduct(c.t.deps);
      const plan = await makePlan(c.t.deps, product.id, { maxSeats });
      const { license, key } = await makeLicense(c.t.deps, { productId: product.id, planId: plan.id, email: owner });
      return { license, key, cookie: await c.t.signIn(owner) };
    }

    test("30 concurrent adds of distinct emails against max_seats = 5 → exactly 5 seats", async () => {
      const { license, key, cookie } = await ownedLicense(5);
      const results = await all(30, (i) => postJson(c.url(i), "/portal/seats/add", { license_key: key, email: `racer-${i}@example.com` }, { cookie }));
      expect(tally(results)).toEqual({ 200: 5, 409: 25 });
      expect(results.filter((r) => r.status === 409).every((r) => r.body.error.code === "SEAT_LIMIT")).toBe(true);
      expect(await c.t.deps.repos.seats.list(license.id, { includeRemoved: true })).toHaveLength(5);
      // One invite email per seat that was added, none for the refused adds.
      expect((await invites(c.t)).filter((m) => m.to.startsWith("racer-")).length).toBe(5);
    });

    test("20 concurrent accepts of one token → one 200, the rest 404", async () => {
      const { key, cookie } = await ownedLicense(null);
      const email = `invitee-${Math.random().toString(36).slice(2)}@example.com`;
      expect((await postJson(c.url(0), "/portal/seats/add", { license_key: key, email }, { cookie })).status).toBe(200);
      const token = await lastToken(c.t, email);
      const results = await all(20, (i) => postJson(c.url(i), "/invites/accept", { token }));
      expect(tally(results)).toEqual({ 200: 1, 404: 19 });
      expect(await c.t.exec("SELECT id FROM users WHERE email = $1", [email])).toHaveLength(1);
    });
  });
}
