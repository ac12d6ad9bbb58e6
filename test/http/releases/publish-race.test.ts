// Concurrent publishes of one release over real HTTP: exactly one wins (200), the rest get 409
// INVALID_TRANSITION; one "release.publish" audit row; signatures written once. Guards against a
// read-check-then-write publish that would flip (and sign, and audit) the release several times.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { makeProduct } from "../../support/factories";
import { addUploadedArtifact, createDraft } from "./support";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

test("10 parallel publishes → published once", async () => {
  const product = await makeProduct(t.deps);
  const draft = await createDraft(t, product.id, { version: "1.0.0" });
  await addUploadedArtifact(t, draft.id, "darwin-arm64", new Uint8Array(256 * 1024).fill(7));
  await addUploadedArtifact(t, draft.id, "windows-x64", new Uint8Array(128 * 1024).fill(9));
  const server = t.listen();

  const responses = await Promise.all(
    Array.from({ length: 10 }, () =>
      fetch(`${server.url}/api/v1/admin/releases/${draft.id}/publish`, { method: "POST", headers: { authorization: `Bearer ${t.adminKey}` } }),
    ),
  );
  const bodies = await Promise.all(responses.map((r) => r.json() as Promise<any>));
  const statuses = responses.map((r) => r.status).sort();
  expect(statuses).toEqual([200, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
  for (const b of bodies.filter((b) => !b.success)) expect(b.error.code).toBe("INVALID_TRANSITION");

  const winner = bodies.find((b) => b.success).data;
  expect(winner.status).toBe("published");
  const audit = await t.request("GET", `/api/v1/admin/audit?entity_id=${draft.id}&action=release.publish`);
  expect(audit.body.data.items).toHaveLength(1);

  // The stored signatures are the winner's (written once, never overwritten by a loser).
  const stored = (await t.deps.repos.releases.findById(draft.id))!;
  expect(stored.status).toBe("published");
  expect(stored.artifacts.map((a) => [a.id, a.edSignature, a.minisignSignature])).toEqual(
    winner.artifacts.map((a: any) => [a.id, a.ed_signature, a.minisign_signature]),
  );
});
