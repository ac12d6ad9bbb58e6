// `keyward serve` in production without SMTP_URL says, once at boot, that emails are only logged.
import { afterAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { removeTempDirs, startKeyward, tempDir } from "./support";

afterAll(removeTempDirs);

const production = () => ({
  NODE_ENV: "production",
  BASE_URL: "https://licenses.example.com",
  RELEASE_KEY_ENCRYPTION_KEY: randomBytes(32).toString("hex"),
  DATA_DIR: tempDir(),
  JOBS: "off",
});
const warnings = (stdout: string) =>
  stdout
    .split("\n")
    .filter((l) => l.includes("SMTP_URL"))
    .map((l) => JSON.parse(l) as { level: string; msg: string });

test("production without SMTP_URL: one warning at boot; with SMTP_URL and MAIL_FROM: none", async () => {
  const bare = await startKeyward({ env: production() });
  try {
    expect(warnings(bare.output().stdout)).toEqual([
      { level: "warn", msg: "SMTP_URL is not set: emails (sign-in codes, invites) are written to the log instead of being sent", time: expect.any(String) } as never,
    ]);
  } finally {
    expect(await bare.stop("SIGTERM")).toBe(0);
  }
  const mailing = await startKeyward({ env: { ...production(), SMTP_URL: "smtp://mailer:s3cret-pw@127.0.0.1:9", MAIL_FROM: "noreply@example.com" } });
  try {
    expect(warnings(mailing.output().stdout)).toEqual([]);
    // The SMTP password never reaches the log.
    expect(mailing.output().stdout + mailing.output().stderr).not.toContain("s3cret-pw");
  } finally {
    expect(await mailing.stop("SIGTERM")).toBe(0);
  }
}, 60_000);
