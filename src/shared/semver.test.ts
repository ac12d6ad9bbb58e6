import { describe, expect, test } from "bun:test";
import { compareVersions, isSemver } from "./semver";

describe("semver", () => {
  test("precedence follows semver.org §11", () => {
    const ordered = [
      "1.0.0-alpha",
      "1.0.0-alpha.1",
      "1.0.0-alpha.beta",
      "1.0.0-beta",
      "1.0.0-beta.2",
      "1.0.0-beta.11",
      "1.0.0-rc.1",
      "1.0.0",
      "1.0.1",
      "1.2.0",
      "1.10.0",
      "2.0.0",
    ];
    for (let i = 0; i + 1 < ordered.length; i++) {
      expect(compareVersions(ordered[i]!, ordered[i + 1]!)).toBeLessThan(0);
      expect(compareVersions(ordered[i + 1]!, ordered[i]!)).toBeGreaterThan(0);
    }
    expect(compareVersions("1.0.0+build.1", "1.0.0+build.2")).toBe(0);
  });

  test("rejects what is not a semantic version", () => {
    for (const bad of ["1.2", "v1.2.3", "01.2.3", "1.2.3-", "1.2.3-01", "", "1.2.3.4"]) expect(isSemver(bad)).toBe(false);
    for (const good of ["0.0.1", "1.2.3-beta.1+sha.abc", "10.20.30"]) expect(isSemver(good)).toBe(true);
  });
});
