// OutboxRepo on every engine, the email side: markSent with status logged, and listEmails (newest
// first, filters, keyset pagination with ties on created_at, ASCII-only case folding of `to`).
import { afterEach, expect, test } from "bun:test";
import type { OutboxMessage, OutboxRepo } from "../../src/modules/outbox/repo";
import { forEachEngine, type Opened } from "./harness";
import { repoFor } from "./repos";
import { insertRows } from "./seed";
import { newId } from "../../src/shared/ids";

const T0 = new Date("2026-11-21T08:00:00.000Z");
const at = (ms: number) => new Date(T0.getTime() + ms);

function email(to: string, over: Partial<OutboxMessage> = {}): OutboxMessage & Record<string, unknown> {
  const template = over.topic ?? "sign_in_code";
  return {
    id: newId(),
    kind: "email",
    topic: template,
    payload: { template, to, data: { ttl_minutes: 10 }, sealed: "v1.x.y" },
    status: "pending",
    attempts: 0,
    nextAttemptAt: T0,
    lastError: null,
    createdAt: T0,
    sentAt: null,
    ...over,
  };
}

forEachEngine("OutboxRepo (emails)", (engine, open) => {
  let o: Opened;
  let repo: OutboxRepo;
  const setup = async () => {
    o = await open();
    repo = repoFor(o).outbox;
  };
  afterEach(() => o?.close());

  test("markSent records the delivered status: sent by default, or logged", async () => {
    await setup();
    const a = email("a@example.com");
    const b = email("b@example.com", { createdAt: at(1) });
    await insertRows(o, "outbox", [a, b]);
    const lease = at(60_000);
    await repo.claimDue({ now: T0, limit: 10, leaseUntil: lease, kinds: ["email"] });
    expect(await repo.markSent(a.id, lease, at(5))).toBe(true);
    expect(await repo.markSent(b.id, lease, at(6), "logged")).toBe(true);
    expect(await repo.get(a.id)).toMatchObject({ status: "sent", sentAt: at(5) });
    expect(await repo.get(b.id)).toMatchObject({ status: "logged", sentAt: at(6) });
    // Logged is final: never claimed again.
    expect(await repo.claimDue({ now: at(120_000), limit: 10, leaseUntil: at(180_000), kinds: ["email"] })).toEqual([]);
  });

  test("listEmails: emails only, newest first with ties broken by id, filters combined, pages that never repeat", async () => {
    await setup();
    const rows = [
      email("Bob@Example.com", { createdAt: at(1) }),
      email("carol@example.com", { createdAt: at(2), topic: "seat_invite", status: "failed", attempts: 3, lastError: "SMTP 550" }),
      // Three at the same instant: the id orders them, the same way on both engines.
      email("bob@example.com", { createdAt: at(3), status: "sent", sentAt: at(4) }),
      email("bob@example.com", { createdAt: at(3), topic: "seat_invite" }),
      email("bob@example.com.evil", { createdAt: at(3), status: "logged", sentAt: at(3) }),
      email("ÄBC@example.com", { createdAt: at(4) }),
    ];
    const event = { ...email("bob@example.com", { createdAt: at(9) }), kind: "event", topic: "license.revoked" };
    await insertRows(o, "outbox", [...rows, event]);
    const byId = (ids: string[]) => ids.map((id) => rows.findIndex((r) => r.id === id));
    const newest = [5, 4, 3, 2, 1, 0].sort((x, y) => rows[y]!.createdAt.getTime() - rows[x]!.createdAt.getTime() || (rows[x]!.id < rows[y]!.id ? 1 : -1));

    const all = await repo.listEmails({ limit: 50 });
    expect(byId(all.items.map((m) => m.id))).toEqual(newest);
    expect(all.nextCursor).toBeNull();
    expect(all.items.find((m) => m.id === rows[1]!.id)).toEqual(rows[1]);

    // Pages of two walk the same order.
    const walked: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 5; i++) {
      const page = await repo.listEmails({ limit: 2, cursor });
      walked.push(...page.items.map((m) => m.id));
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(byId(walked)).toEqual(newest);

    const ids = async (f: Parameters<OutboxRepo["listEmails"]>[0]) => byId((await repo.listEmails(f)).items.map((m) => m.id)).sort();
    expect(await ids({ limit: 50, status: "pending" })).toEqual([0, 3, 5]);
    expect(await ids({ limit: 50, status: "logged" })).toEqual([4]);
    expect(await ids({ limit: 50, template: "seat_invite" })).toEqual([1, 3]);
    expect(await ids({ limit: 50, to: "BOB@example.COM" })).toEqual([0, 2, 3]);
    expect(await ids({ limit: 50, to: "bob@example.com", status: "pending", template: "sign_in_code" })).toEqual([0]);
    expect(await ids({ limit: 50, to: "bob@" })).toEqual([]);
    // Case folding is ASCII only on both engines: Ä and ä are different letters here.
    expect(await ids({ limit: 50, to: "ÄBC@EXAMPLE.COM" })).toEqual([5]);
    expect(await ids({ limit: 50, to: "äbc@example.com" })).toEqual([]);
  });
});
