// /api/v1/docs in a real browser (Debian's Chromium, driven by playwright-core) with no outside
// network: every request that is not for the test server is aborted, and the page's own CSP allows
// only its origin. The page must still list every operation of the document: the viewer is served
// by Keyward, not a CDN. Skipped with one line when Chromium is not installed (test/support/tools.ts).
import { afterAll, describe, expect } from "bun:test";
import { chromium } from "playwright-core";
import { createTestApp } from "../support/app";
import { CHROMIUM, toolTest } from "../support/tools";

const t = await createTestApp();
afterAll(() => t.close());

// shared/reference/real-clients.md: how Chromium runs on these machines.
const ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"];

describe("GET /api/v1/docs in headless Chromium, offline", () => {
  toolTest("chromium")(
    "lists every operation and webhook event of the document, loading nothing from outside and violating no CSP",
    async () => {
      const server = t.listen();
      const origin = new URL(server.url).origin;
      const doc = (await (await fetch(`${origin}/api/v1/openapi.json`)).json()) as {
        paths: Record<string, Record<string, unknown>>;
        webhooks: Record<string, Record<string, unknown>>;
      };
      // Every operation, and every webhook event (the UI lists those by event type).
      const expected = [...Object.entries(doc.paths), ...Object.entries(doc.webhooks)]
        .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
        .sort();
      expect(Object.keys(doc.webhooks).length).toBeGreaterThan(20);
      expect(expected.length).toBeGreaterThan(20);

      const browser = await chromium.launch({ executablePath: CHROMIUM!, args: ARGS });
      try {
        const context = await browser.newContext({ serviceWorkers: "block" });
        const outside: string[] = [];
        let leftOrigin!: (url: string) => void;
        const attemptedOutside = new Promise<string>((resolve) => (leftOrigin = resolve));
        await context.route("**/*", (route) => {
          const url = new URL(route.request().url());
          if (url.origin === origin || url.protocol === "data:") return route.continue();
          outside.push(url.href);
          leftOrigin(url.href);
          return route.abort("internetdisconnected");
        });
        const page = await context.newPage();
        // Deadlines are hang guards, not the acceptance: on a loaded 2-core machine Swagger UI
        // took ~150 s to render this document (a few seconds on an idle one).
        page.setDefaultTimeout(480_000);
        const problems: string[] = [];
        page.on("console", (m) => {
          if (m.type() === "error" || /Content Security Policy/i.test(m.text())) problems.push(`console: ${m.text()}`);
        });
        page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));

        const res = await page.goto(`${origin}/api/v1/docs`, { waitUntil: "load" });
        expect(res?.status()).toBe(200);
        expect(res?.headers()["content-security-policy"]).toContain("default-src 'none'");
        // The operations appear, or the page tried to load something from outside (fail at once).
        await Promise.race([
          page.waitForSelector('.opblock-summary-path[data-path="/api/v1/license/verify"]'),
          attemptedOutside.then((url) => {
            throw new Error(`the page tried to load ${url}`);
          }),
        ]);

        // Past 128 operations Swagger UI draws only what is in view and unmounts what scrolls out
        // (measured: 8 operations drawn before scrolling, the tags gone at the bottom), as a reader
        // sees it: scroll through the page a screen at a time and collect what each screen shows.
        const seen = new Set<string>();
        const collect = async () => {
          const shown = await page.$$eval(".opblock", (blocks) =>
            blocks.map((b) => `${b.querySelector(".opblock-summary-method")?.textContent?.trim()} ${b.querySelector("[data-path]")?.getAttribute("data-path")}`),
          );
          for (const op of shown) seen.add(op);
        };
        await collect();
        for (let step = 0; step < 2_000 && seen.size < expected.length; step++) {
          // (The page's own window: this file is type-checked without the DOM library.)
          const atBottom = await page.evaluate(() => {
            const w = globalThis as unknown as { scrollY: number; innerHeight: number; scrollBy(x: number, y: number): void };
            const before = w.scrollY;
            w.scrollBy(0, Math.max(200, Math.floor(w.innerHeight / 2)));
            return w.scrollY === before;
          });
          await page.waitForTimeout(50);
          await collect();
          if (atBottom) break;
        }
        expect([...seen].sort()).toEqual(expected);
        expect(await page.title()).toBe("Keyward API");
        expect(outside).toEqual([]);
        expect(problems).toEqual([]);
      } finally {
        await browser.close();
      }
    },
    600_000,
  );
});
