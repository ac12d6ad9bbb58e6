// The compiled executable (scripts/build.ts) runs on its own: embedded migrations, OpenAPI plugin,
// key generation and graceful shutdown all work without the source tree or node_modules beside it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { buildBinary } from "../../scripts/build";
import { removeTempDirs, runKeyward, startKeyward, tempDir } from "./support";

let binary: string;
beforeAll(() => {
  // Built into a temp dir, then run from another one: nothing beside it but its data directory.
  const built = buildBinary({ outfile: join(tempDir("keyward-build-"), "keyward") });
  binary = join(tempDir("keyward-bin-"), "keyward");
  copyFileSync(built, binary);
}, 300_000); // bun build --compile: minutes on a loaded 2-core machine
afterAll(removeTempDirs);

describe("compiled binary", () => {
  test("--help works", () => {
    const r = runKeyward(["--help"], { cmd: [binary] });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("Usage: keyward");
  });

  test("serves health, pubkey and the OpenAPI document, then stops cleanly on SIGTERM", async () => {
    const dataDir = tempDir();
    const running = await startKeyward({ cmd: [binary], env: { DATA_DIR: dataDir } });
    try {
      const health = await fetch(`${running.url}/api/v1/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ success: true, data: { status: "ok", database: "ok" } });

      const pubkey = await fetch(`${running.url}/api/v1/license/pubkey`);
      expect(pubkey.status).toBe(200);
      expect(((await pubkey.json()) as { data: { public_key: string } }).data.public_key).toMatch(/^[0-9a-f]{64}$/);

      const doc = await fetch(`${running.url}/api/v1/openapi.json`);
      expect(doc.status).toBe(200);
      const spec = (await doc.json()) as { openapi: string; paths: Record<string, any> };
      expect(spec.openapi).toStartWith("3.1");
      expect(Object.keys(spec.paths)).toContain("/api/v1/license/pubkey");
      // Generated from the route table at runtime, including our request-body fix-up (http/openapi.ts).
      expect(spec.paths["/api/v1/admin/products"].post.requestBody.content["application/json"].schema.type).toBe("object");
      expect(spec.paths["/api/v1/admin/products"].post.security).toEqual([{ bearerAuth: [] }, { sessionCookie: [] }]);

      const ui = await fetch(`${running.url}/api/v1/docs`);
      expect(ui.status).toBe(200);
      expect(ui.headers.get("content-type")).toContain("text/html");
      expect(ui.headers.get("content-security-policy")).toContain("default-src 'none'");
      // The viewer's files come from inside the executable (nothing lies beside it), byte for byte
      // the pinned swagger-ui-dist package's.
      const refs = [...(await ui.text()).matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!).filter((ref) => !ref.startsWith("data:"));
      expect(refs.length).toBe(3);
      for (const ref of refs) {
        const asset = await fetch(new URL(ref, `${running.url}/api/v1/docs`));
        expect({ ref, status: asset.status }).toEqual({ ref, status: 200 });
        const file = /\/(swagger-ui[^/]*)$/.exec(ref)?.[1];
        if (file) expect({ ref, same: (await asset.text()) === (await Bun.file(require.resolve(`swagger-ui-dist/${file}`)).text()) }).toEqual({ ref, same: true });
      }
    } finally {
      expect(await running.stop("SIGTERM")).toBe(0);
    }
    expect(running.output().stdout).toContain('"msg":"stopped"');
  }, 120_000); // starts the executable: slow on a loaded machine

  test("migrate and api-key create work from the binary; the key authenticates", async () => {
    const dataDir = tempDir();
    expect(runKeyward(["migrate"], { cmd: [binary], env: { DATA_DIR: dataDir } }).exitCode).toBe(0);
    const created = runKeyward(["api-key", "create", "--scopes", "admin"], { cmd: [binary], env: { DATA_DIR: dataDir } });
    expect(created.exitCode).toBe(0);
    const running = await startKeyward({ cmd: [binary], env: { DATA_DIR: dataDir } });
    try {
      const res = await fetch(`${running.url}/api/v1/admin/products`, { headers: { authorization: `Bearer ${created.stdout.trim()}` } });
      expect(res.status).toBe(200);
    } finally {
      expect(await running.stop()).toBe(0);
    }
  }, 120_000);
});
