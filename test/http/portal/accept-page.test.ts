// The accept page's script, run against the real app with a minimal stand-in for the browser (no DOM
// library is installed; Chromium tests live in test/browser and are skipped without Chromium): it
// reads the token from the fragment, clears the address bar, shows the button, POSTs the token to the
// relative API path with credentials, and reports success or the collapsed failure.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../support/app";
import { lastToken, portalPost, team, uniqueEmail } from "./helpers";

let t: TestApp;
let script: string;
beforeAll(async () => {
  t = await createTestApp({ label: "accept-page" });
  script = (await t.request("GET", "/portal/accept-invite/app.js", { key: null })).text;
});
afterAll(() => t.close());
beforeEach(() => t.clock.advance(2 * 60_000));

interface FakeElement {
  hidden: boolean;
  disabled: boolean;
  textContent: string;
  className: string;
  listeners: Record<string, () => void>;
  addEventListener(type: string, fn: () => void): void;
}
const element = (hidden = false): FakeElement => ({
  hidden,
  disabled: false,
  textContent: "",
  className: "",
  listeners: {},
  addEventListener(type, fn) {
    this.listeners[type] = fn;
  },
});

/** Runs the page script at `<page>#<fragment>`; fetches go to the app as from BASE_URL's origin. */
function openPage(fragment: string) {
  const page = "http://localhost/portal/accept-invite";
  const els = { accept: element(true), status: element() };
  const calls: { url: string; init: RequestInit }[] = [];
  const responses: Response[] = [];
  const location = { hash: fragment ? `#${fragment}` : "", href: `${page}${fragment ? `#${fragment}` : ""}`, pathname: "/portal/accept-invite" };
  const replaced: string[] = [];
  const window = {
    location,
    history: {
      replaceState: (_s: unknown, _t: string, url: string) => {
        replaced.push(url);
        location.hash = "";
        location.href = page;
      },
    },
  };
  const document = { getElementById: (id: "accept" | "status") => els[id] };
  const inflight: Promise<unknown>[] = [];
  const fetch = (url: string, init: RequestInit) => {
    calls.push({ url, init });
    const headers = { ...(init.headers as Record<string, string>), origin: t.deps.config.baseUrl };
    const done = t.app.handle(new Request(url, { ...init, headers })).then((res) => {
      responses.push(res.clone() as unknown as Response);
      return res;
    });
    inflight.push(done);
    return done;
  };
  new Function("window", "document", "fetch", "URL", script)(window, document, fetch, URL);
  return { els, calls, responses, replaced, inflight };
}

/** Waits for the page's requests, then (by turns of the event loop, not by time) for its handlers. */
async function settled(page: { els: { status: FakeElement }; inflight: Promise<unknown>[] }, from: string) {
  await Promise.all(page.inflight);
  for (let i = 0; i < 100 && page.els.status.textContent === from; i++) await new Promise((r) => setImmediate(r));
  return page.els.status.textContent;
}

describe("the accept page's script", () => {
  test("accepts the invite from the fragment and says so; the answer carries the session cookie", async () => {
    const tm = await team(t);
    const email = uniqueEmail("page");
    await portalPost(t, tm.owner.cookie, "/portal/seats/add", { license_key: tm.key, email });
    const token = await lastToken(t, email);
    const page = openPage(`token=${token}`);
    const { els, calls, responses, replaced } = page;
    expect(replaced).toEqual(["/portal/accept-invite"]); // the token left the address bar
    expect(els.accept.hidden).toBe(false);
    expect(calls).toEqual([]); // nothing is sent before the click
    els.accept.listeners.click!();
    expect(els.accept.disabled).toBe(true);
    const text = await settled(page, "Accepting…");
    expect(calls.length).toBe(1);
    expect(calls[0]!.url).toBe("http://localhost/api/v1/invites/accept");
    expect(calls[0]!.init).toMatchObject({ method: "POST", credentials: "include" });
    expect(JSON.parse(String(calls[0]!.init.body))).toEqual({ token });
    expect(responses[0]!.status).toBe(200);
    expect(responses[0]!.headers.get("set-cookie")).toMatch(/^session=/);
    expect(text).toContain(email);
    expect(text).toContain("member");
    expect(els.status.className).toBe("ok");
    expect(els.accept.hidden).toBe(true);
  });

  test("a used or unknown token shows the one failure message; no token: no button, nothing sent", async () => {
    const unknown = openPage(`token=${"0".repeat(64)}`);
    const { els } = unknown;
    els.accept.listeners.click!();
    expect(await settled(unknown, "Accepting…")).toContain("not valid");
    expect(els.status.className).toBe("error");

    for (const fragment of ["", "token=abc", `other=${"1".repeat(64)}`]) {
      const page = openPage(fragment);
      expect(page.els.accept.hidden).toBe(true);
      expect(page.els.status.className).toBe("error");
      expect(page.calls).toEqual([]);
    }
  });
});
