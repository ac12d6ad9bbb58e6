import { describe, expect, test } from "bun:test";
import { compareVersions } from "../../shared/semver";
import { AppError } from "../../shared/errors";
import {
  CHANNEL_FALLBACK,
  assertArtifactsOpen,
  assertDeletable,
  assertFinalizable,
  assertPublishable,
  assertSignedAsStored,
  coveredBySupport,
  sparkleVersion,
  unyank,
  versionSortKey,
  yank,
} from "./domain";

const VERSIONS = [
  "0.0.1",
  "0.9.0",
  "1.0.0-0",
  "1.0.0-2",
  "1.0.0-10",
  "1.0.0-alpha",
  "1.0.0-alpha.1",
  "1.0.0-alpha.1.0",
  "1.0.0-alpha.2",
  "1.0.0-alpha.10",
  "1.0.0-alpha.beta",
  "1.0.0-alpha-x",
  "1.0.0-alphabet",
  "1.0.0-beta",
  "1.0.0-beta.2",
  "1.0.0-beta.11",
  "1.0.0-rc.1",
  "1.0.0-Z",
  "1.0.0",
  "1.0.1-a",
  "1.0.1",
  "1.2.0",
  "1.10.0",
  "2.0.0-99999999999999999999",
  "2.0.0",
  "10.0.0",
  "9007199254740991.0.0",
];

describe("versionSortKey", () => {
  test("byte order of the keys equals semver precedence for every pair", () => {
    for (const a of VERSIONS) {
      for (const b of VERSIONS) {
        const byKey = Math.sign(Buffer.compare(Buffer.from(versionSortKey(a)), Buffer.from(versionSortKey(b))));
        expect([a, b, byKey]).toEqual([a, b, Math.sign(compareVersions(a, b))]);
      }
    }
  });

  test("build metadata does not change the key (equal precedence)", () => {
    expect(versionSortKey("1.2.3+build.7")).toBe(versionSortKey("1.2.3"));
  });

  test("refuses a non-semver string", () => {
    expect(() => versionSortKey("1.2")).toThrow();
  });
});

test("sparkleVersion keeps MAJOR.MINOR.PATCH only (Sparkle drops text after '-')", () => {
  expect(sparkleVersion("1.2.3-beta.1+b5")).toBe("1.2.3");
  expect(sparkleVersion("10.0.0")).toBe("10.0.0");
});

test("channel fallback chains (DECISIONS)", () => {
  expect(CHANNEL_FALLBACK).toEqual({
    stable: ["stable"],
    beta: ["beta", "stable"],
    alpha: ["alpha", "beta", "stable"],
    dev: ["dev", "alpha", "beta", "stable"],
  });
});

test("support cutoff: published strictly before support_until", () => {
  const until = new Date("2026-01-01T00:00:00Z");
  expect(coveredBySupport({ publishedAt: new Date("2025-12-31T23:59:59.999Z") }, until)).toBe(true);
  expect(coveredBySupport({ publishedAt: until }, until)).toBe(false);
  expect(coveredBySupport({ publishedAt: new Date("2027-01-01T00:00:00Z") }, null)).toBe(true);
});

describe("transitions", () => {
  const code = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      return (e as AppError).code;
    }
    return null;
  };
  test("publish needs a draft with ≥1 artifact, all finalized", () => {
    expect(code(() => assertPublishable({ status: "draft" }, []))).toBe("CONFLICT");
    expect(code(() => assertPublishable({ status: "draft" }, [{ platform: "linux-x64", status: "pending" }]))).toBe("CONFLICT");
    expect(code(() => assertPublishable({ status: "published" }, [{ platform: "linux-x64", status: "finalized" }]))).toBe("INVALID_TRANSITION");
    expect(code(() => assertPublishable({ status: "draft" }, [{ platform: "linux-x64", status: "finalized" }]))).toBeNull();
  });
  test("yank only published, unyank only yanked", () => {
    const at = new Date(0);
    expect(yank({ status: "published" }, "bad build", at)).toEqual({ status: "yanked", yankReason: "bad build", yankedAt: at });
    expect(code(() => yank({ status: "draft" }, "x", at))).toBe("INVALID_TRANSITION");
    expect(code(() => yank({ status: "yanked" }, "x", at))).toBe("INVALID_TRANSITION");
    expect(unyank({ status: "yanked" })).toEqual({ status: "published", yankReason: null, yankedAt: null });
    expect(code(() => unyank({ status: "published" }))).toBe("INVALID_TRANSITION");
  });
  const refusal = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      const { code, message, details } = e as AppError;
      return { code, message, details };
    }
    return null;
  };
  test("only a draft is deleted or takes artifacts", () => {
    expect(refusal(() => assertDeletable({ status: "draft" }))).toBeNull();
    expect(refusal(() => assertDeletable({ status: "published" }))).toEqual({
      code: "INVALID_TRANSITION",
      message: "Only draft releases can be deleted; this one is published. Yank it instead.",
      details: { from: "published", action: "delete" },
    });
    expect(refusal(() => assertArtifactsOpen({ status: "draft" }))).toBeNull();
    expect(refusal(() => assertArtifactsOpen({ status: "yanked" }))).toEqual({
      code: "INVALID_TRANSITION",
      message: "Artifacts can only be added to draft releases; this one is yanked.",
      details: { from: "yanked", action: "add_artifact" },
    });
  });
  test("a digest is recorded in a draft, for the object that was hashed", () => {
    expect(refusal(() => assertFinalizable({ status: "draft" }, { storageKey: "k" }, "k"))).toBeNull();
    expect(refusal(() => assertFinalizable({ status: "draft" }, { storageKey: "k2" }, "k"))).toEqual({
      code: "CONFLICT",
      message: "The artifact was replaced while it was being finalized.",
      details: null,
    });
    // A release that left draft refuses first, whatever the key.
    expect(refusal(() => assertFinalizable({ status: "published" }, { storageKey: "k2" }, "k"))).toEqual({
      code: "INVALID_TRANSITION",
      message: "Artifacts of a published release cannot be finalized again.",
      details: { from: "published", action: "finalize" },
    });
  });
  test("publish commits a draft whose artifacts are exactly the ones signed, with the digests signed", () => {
    const a = { id: "a", status: "finalized" as const, blake2b512: "aa" };
    const b = { id: "b", status: "finalized" as const, blake2b512: "bb" };
    const sig = (x: { id: string; blake2b512: string | null }) => ({ artifactId: x.id, blake2b512: x.blake2b512! });
    expect(refusal(() => assertSignedAsStored({ status: "draft" }, [a, b], [sig(b), sig(a)]))).toBeNull();
    expect(refusal(() => assertSignedAsStored({ status: "published" }, [a, b], [sig(a), sig(b)]))).toEqual({
      code: "INVALID_TRANSITION",
      message: "The release is already published.",
      details: { from: "published", action: "publish" },
    });
    const changed = [
      [[a, b], [sig(a)]], // added after signing
      [[a], [sig(a), sig(b)]], // removed after signing
      [[a, { ...b, blake2b512: "ff" }], [sig(a), sig(b)]], // bytes changed
      [[a, b], [sig(a), { ...sig(b), artifactId: "c" }]], // another set of the same size
      [[a, { ...b, status: "pending" as const }], [sig(a), sig(b)]], // not finalized
    ] as const;
    for (const [stored, signed] of changed) {
      expect(refusal(() => assertSignedAsStored({ status: "draft" }, stored, signed))).toEqual({
        code: "CONFLICT",
        message: "The release's artifacts changed while it was being published; publish again.",
        details: null,
      });
    }
  });
});

test("wire schemas list exactly the stored enums", async () => {
  const { PlatformSchema, ChannelSchema } = await import("./model");
  const { PLATFORMS, RELEASE_CHANNELS } = await import("../../db/schema/releases");
  const { UpgradeQuery } = await import("../feeds/model");
  const { TAURI_PLATFORM_ALIASES } = await import("../feeds/domain");
  const values = (u: { anyOf: { const: string }[] }) => u.anyOf.map((l) => l.const);
  expect(values(PlatformSchema)).toEqual([...PLATFORMS]);
  expect(values(ChannelSchema)).toEqual([...RELEASE_CHANNELS]);
  expect(values(UpgradeQuery.properties.platform)).toEqual([...PLATFORMS, ...Object.keys(TAURI_PLATFORM_ALIASES)]);
});
