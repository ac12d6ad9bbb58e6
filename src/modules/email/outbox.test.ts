import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { secretsFromMaster } from "../keys/secrets";
import { emailMessage } from "../outbox/effects";
import { openEmail, sealedEmail } from "./outbox";

const secrets = secretsFromMaster(new Uint8Array(randomBytes(32)));
const at = new Date("2026-11-21T08:00:00.000Z");

describe("sealedEmail", () => {
  test("seals the secret values; the outbox payload carries template, to, data and sealed only", () => {
    const e = sealedEmail(secrets, { template: "sign_in_code", to: "bob@example.com", at, data: { ttl_minutes: 10 }, secret: { code: "123456" } });
    expect(e).toEqual({ template: "sign_in_code", to: "bob@example.com", at, data: { ttl_minutes: 10 }, sealed: expect.stringMatching(/^v1\./) });
    const m = emailMessage(e);
    expect(m).toEqual({ kind: "email", topic: "sign_in_code", at, payload: { template: "sign_in_code", to: "bob@example.com", data: { ttl_minutes: 10 }, sealed: e.sealed } });
    expect(JSON.stringify(m)).not.toContain("123456");
    expect(openEmail(secrets, m.payload)).toEqual({ template: "sign_in_code", to: "bob@example.com", data: { ttl_minutes: 10 }, secret: { code: "123456" } });
  });

  test("without secrets nothing is sealed", () => {
    const e = sealedEmail(secrets, { template: "seat_invite", to: "c@example.com", at, data: { product_name: "P" } });
    expect(e.sealed).toBeUndefined();
    expect(emailMessage(e).payload).toEqual({ template: "seat_invite", to: "c@example.com", data: { product_name: "P" } });
    expect(openEmail(secrets, emailMessage(e).payload).secret).toEqual({});
  });

  test("a sealed value opens only for its own template and recipient, and only with its key", () => {
    const payload = emailMessage(sealedEmail(secrets, { template: "sign_in_code", to: "bob@example.com", at, data: { ttl_minutes: 10 }, secret: { code: "123456" } })).payload as Record<string, unknown>;
    expect(() => openEmail(secrets, { ...payload, to: "eve@example.com" })).toThrow();
    expect(() => openEmail(secrets, { ...payload, template: "seat_invite" })).toThrow();
    expect(() => openEmail(secretsFromMaster(new Uint8Array(randomBytes(32))), payload)).toThrow();
    expect(() => openEmail(secrets, { ...payload, template: "newsletter" })).toThrow();
    expect(() => openEmail(secrets, null)).toThrow();
  });
});
