// Server settings Keyward depends on (src/db/pg.ts assertSupportedServer), and timestamps read back
// from PostgreSQL (src/db/pg.ts pgTimestamptzToIso): drizzle hands the server's
// text to `new Date`, whose lenient parser read years 0001-0099 as 1950-2049 and gave an Invalid Date
// (a 500 on every read of the row) for offsets with seconds, which a server whose TimeZone is not UTC
// writes for instants before its zone adopted standard time.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { pgTimestamptzToIso, unsupportedServerReason } from "../../src/db/pg";
import { createTestApp, type TestApp } from "../support/app";
import { makeCatalog } from "../support/factories";
import { freshPgDatabase, pgTestUrl, testDatabaseName, type ScratchDatabase } from "../support/pg";
import postgres from "postgres";

describe("unsupportedServerReason", () => {
  const ok = { style: "ISO, MDY", encoding: "UTF8", versionNum: 150020, standardStrings: "on" };
  test("PostgreSQL 14 and later with ISO output and UTF8 are served; anything else is refused with what to change", () => {
    expect(unsupportedServerReason(ok)).toBeNull();
    expect(unsupportedServerReason({ ...ok, versionNum: 140000 })).toBeNull();
    expect(unsupportedServerReason({ ...ok, style: "ISO, DMY" })).toBeNull();
    expect(unsupportedServerReason({ ...ok, versionNum: 130016 })).toBe("PostgreSQL 13 is not supported; Keyward needs PostgreSQL 14 or later");
    expect(unsupportedServerReason({ ...ok, style: "Postgres, MDY" })).toContain("SET DateStyle = 'ISO, MDY'");
    expect(unsupportedServerReason({ ...ok, encoding: "SQL_ASCII" })).toContain("ENCODING 'UTF8'");
    expect(unsupportedServerReason({ ...ok, standardStrings: "off" })).toContain("SET standard_conforming_strings = on");
  });
});

describe("pgTimestamptzToIso", () => {
  test("reads PostgreSQL's ISO output exactly, whatever the offset and the year", () => {
    expect(pgTimestamptzToIso("2026-11-21 08:00:00+00")).toBe("2026-11-21T08:00:00.000Z");
    expect(pgTimestamptzToIso("2026-11-21 09:00:00.123456+01")).toBe("2026-11-21T08:00:00.123Z");
    expect(pgTimestamptzToIso("2026-11-21 13:30:00.5+05:30")).toBe("2026-11-21T08:00:00.500Z");
    expect(pgTimestamptzToIso("2026-11-21 04:30:00.999999-03:30")).toBe("2026-11-21T08:00:00.999Z");
    expect(pgTimestamptzToIso("1850-01-01 00:09:21+00:09:21")).toBe("1850-01-01T00:00:00.000Z");
    expect(pgTimestamptzToIso("1849-12-31 20:29:08-03:30:52")).toBe("1850-01-01T00:00:00.000Z");
    expect(pgTimestamptzToIso("0001-01-01 00:00:00+00")).toBe("0001-01-01T00:00:00.000Z");
    expect(pgTimestamptzToIso("0099-12-31 23:59:59.999+00")).toBe("0099-12-31T23:59:59.999Z");
    expect(pgTimestamptzToIso("9999-12-31 23:59:59.999+00")).toBe("9999-12-31T23:59:59.999Z");
    expect(pgTimestamptzToIso("0001-12-31 12:00:00+00 BC")).toBe("0000-12-31T12:00:00.000Z");
    expect(pgTimestamptzToIso("infinity")).toBe("infinity");
  });

  test("another form (DateStyle changed under a running node) fails loudly instead of being read with day and month swapped", () => {
    expect(() => pgTimestamptzToIso("01/02/2027 00:00:00 UTC")).toThrow("was DateStyle changed from ISO");
    expect(() => pgTimestamptzToIso("Mon Feb 01 00:00:00 2027 UTC")).toThrow("was DateStyle changed from ISO");
  });
});

describe.skipIf(!pgTestUrl())("timestamps through a PostgreSQL server whose TimeZone is not UTC", () => {
  let database: ScratchDatabase;
  let t: TestApp;
  beforeAll(async () => {
    database = await freshPgDatabase("timestamps", { migrated: true });
    // Newfoundland: a half-hour offset now, local mean time (-03:30:52) before 1935.
    const admin = postgres(database.url, { max: 1, onnotice: () => {} });
    await admin.unsafe(`ALTER DATABASE "${database.name}" SET timezone = 'America/St_Johns'`);
    await admin.end();
    t = await createTestApp({ engine: "postgres", env: { DATABASE_URL: database.url } });
  });
  afterAll(async () => {
    await t?.close();
    await database?.drop();
  });

  test("every instant comes back as it was written: historic, first-century and last ones", async () => {
    const [zone] = await t.exec<{ timezone: string }>("SELECT current_setting('TimeZone') AS timezone");
    expect(zone!.timezone).toBe("America/St_Johns");
    const { license } = await makeCatalog(t.deps);
    for (const at of ["1850-01-01T00:00:00.000Z", "0001-01-01T00:00:00.000Z", "0050-06-15T12:34:56.789Z", "2026-11-21T08:00:00.123Z", "9999-12-31T23:59:59.999Z"]) {
      const set = await t.request("POST", `/api/v1/admin/licenses/${license.id}/valid-until`, { body: { valid_until: at } });
      expect({ at, status: set.status, valid_until: set.body.data?.valid_until }).toEqual({ at, status: 200, valid_until: at });
      const read = await t.request("GET", `/api/v1/admin/licenses/${license.id}`);
      expect({ at, valid_until: read.body.data.valid_until }).toEqual({ at, valid_until: at });
      expect((await t.deps.repos.licenses.findById(license.id))!.validUntil!.toISOString()).toBe(at);
    }
  });
});

describe.skipIf(!pgTestUrl())("a server whose DateStyle is not ISO", () => {
  const databases: ScratchDatabase[] = [];
  afterAll(async () => {
    for (const d of databases) await d.drop();
  });
  async function databaseWith(style: string): Promise<ScratchDatabase> {
    const database = await freshPgDatabase("datestyle");
    databases.push(database);
    const admin = postgres(database.url, { max: 1, onnotice: () => {} });
    await admin.unsafe(`ALTER DATABASE "${database.name}" SET DateStyle = '${style}'`);
    await admin.end();
    return database;
  }

  test("a node refuses to start, saying what to set, before it migrates anything", async () => {
    // "SQL, DMY" writes 2027-02-01 as "01/02/2027 00:00:00 UTC", which new Date reads as January 2nd,
    // and 2026-11-21 as "21/11/2026 …", an Invalid Date (a 500 on every read of the row).
    const database = await databaseWith("SQL, DMY");
    const err = await createTestApp({ engine: "postgres", env: { DATABASE_URL: database.url } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain(`DateStyle is "SQL, DMY"`);
    expect((err as Error).message).toContain("ALTER DATABASE");
    const probe = postgres(database.url, { max: 1, onnotice: () => {} });
    const tables = await probe`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`;
    await probe.end();
    expect([...tables]).toEqual([]);
  });

  test("standard_conforming_strings off (a legacy setting, under which the searches' ESCAPE '\\' fails) is refused too", async () => {
    const database = await freshPgDatabase("scs");
    databases.push(database);
    const admin = postgres(database.url, { max: 1, onnotice: () => {} });
    await admin.unsafe(`ALTER DATABASE "${database.name}" SET standard_conforming_strings = off`);
    await admin.end();
    const err = await createTestApp({ engine: "postgres", env: { DATABASE_URL: database.url } }).catch((e: unknown) => e);
    expect((err as Error).message).toContain("standard_conforming_strings is off");
  });

  test("ISO output with day-month input order (what initdb picks for many locales) is served", async () => {
    const database = await databaseWith("ISO, DMY");
    const t = await createTestApp({ engine: "postgres", env: { DATABASE_URL: database.url } });
    try {
      const { license } = await makeCatalog(t.deps);
      const set = await t.request("POST", `/api/v1/admin/licenses/${license.id}/valid-until`, { body: { valid_until: "2027-02-01T00:00:00.000Z" } });
      expect(set.body.data.valid_until).toBe("2027-02-01T00:00:00.000Z");
    } finally {
      await t.close();
    }
  });
});

describe.skipIf(!pgTestUrl())("a database whose encoding is not UTF8", () => {
  test("a node refuses to start, saying how to create the database, before it migrates anything", async () => {
    const base = pgTestUrl()!;
    const name = testDatabaseName("latin1");
    const admin = postgres(base, { max: 1, onnotice: () => {} });
    await admin.unsafe(`CREATE DATABASE "${name}" TEMPLATE template0 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C'`);
    try {
      const url = new URL(base);
      url.pathname = `/${name}`;
      // Before: the migrations failed on their first "…" with "character with byte sequence 0xe2
      // 0x80 0xa6 in encoding UTF8 has no equivalent in encoding LATIN1".
      const err = await createTestApp({ engine: "postgres", env: { DATABASE_URL: url.toString() } }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toContain("the database's encoding is LATIN1");
      expect((err as Error).message).toContain("ENCODING 'UTF8'");
      const probe = postgres(url.toString(), { max: 1, onnotice: () => {} });
      const tables = await probe`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`;
      await probe.end();
      expect([...tables]).toEqual([]);
    } finally {
      await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end();
    }
  });
});
