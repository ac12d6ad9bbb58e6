import { describe, expect, test } from "bun:test";
import { describePgUrl, hostsOf, parsePgUrl, type PgUrl } from "./pg-url";

const parsed = (raw: string): PgUrl => {
  const url = parsePgUrl(raw);
  if ("error" in url) throw new Error(url.error);
  return url;
};

describe("PostgreSQL URLs, as postgres.js reads them", () => {
  test("one host, or a failover list of host[:port] in order, IPv6 in brackets", () => {
    expect(parsed("postgres://u:p@db.internal:5432/keyward")).toMatchObject({ hosts: [{ host: "db.internal", port: 5432 }], user: "u", database: "keyward" });
    const many = parsed("postgresql://keyward@db1:5432,db2,[::1]:6432/kw%20prod?target_session_attrs=read-write");
    expect(many.hosts).toEqual([
      { host: "db1", port: 5432 },
      { host: "db2", port: null },
      { host: "[::1]", port: 6432 },
    ]);
    expect(many.database).toBe("kw prod");
    expect(many.params.get("target_session_attrs")).toBe("read-write");
    expect(hostsOf(many)).toBe("db1:5432,db2,[::1]:6432");
  });

  test("what is not such a URL says why, never with the URL in it", () => {
    for (const [raw, reason] of [
      ["mysql://u:s3cret@db/kw", "postgres://"],
      ["postgres://u:s3cret@/kw", "with a host"],
      ["postgres://u:s3cret@db1,,db2/kw", "host list"],
      ["postgres://u:s3cret@db1:0/kw", "host list"],
      ["postgres://u:s3cret@[::1/kw", "host list"],
      ["postgres://u:s3cret@db1/kw?target_session_attrs=master", "target_session_attrs"],
      ["postgres://u:s3c@ret@db1/kw", "%40"],
    ] as const) {
      const url = parsePgUrl(raw);
      expect("error" in url && url.error).toContain(reason);
      expect(JSON.stringify(url)).not.toContain("s3c");
    }
  });

  test("described for messages without the password or the parameters", () => {
    expect(describePgUrl("postgres://u:s3cret@db1:5432,db2/keyward?sslmode=require")).toBe("postgres://u@db1:5432,db2/keyward");
    expect(describePgUrl("postgres://db/keyward")).toBe("postgres://db/keyward");
    expect(describePgUrl("postgres://u:s3cret@")).toBe("(unparsable URL)");
  });
});
