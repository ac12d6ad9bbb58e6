import { describe, expect, test } from "bun:test";
import { pathOf } from "./request-context";

describe("pathOf", () => {
  test("matches URL#pathname for the request URLs a server sees", () => {
    for (const u of [
      "http://localhost/api/v1/license/verify",
      "http://127.0.0.1:8080/api/v1/releases/app/feed.xml?platform=linux-x64&limit=5",
      "https://licenses.example.com/",
      "http://[::1]:8080/api/v1/health?x=/y",
      "http://localhost",
    ]) {
      expect(pathOf(u)).toBe(new URL(u).pathname);
    }
  });
});
