// PostgreSQL connection URLs as postgres.js reads them, including its multi-host form for failover:
//   postgres://user:secret@db1:5432,db2:5432/keyward?target_session_attrs=read-write
// postgres.js tries the hosts in order (and, with target_session_attrs, skips those in the wrong
// role); WHATWG URL parsing refuses a host list with ports, so Keyward parses the list itself here,
// the way the driver does (the host part up to the first / or ?, after the @; an unencoded @ in the
// password would be read differently by the driver, so it is refused).

export interface PgUrlHost {
  host: string;
  /** Null when the URL gives none (5432). */
  port: number | null;
}

export interface PgUrl {
  hosts: PgUrlHost[];
  user: string;
  database: string;
  /** The query parameters (sslmode, target_session_attrs, …), as given. */
  params: URLSearchParams;
}

/** The target_session_attrs values postgres.js supports (it throws at start-up for any other). */
export const TARGET_SESSION_ATTRS = ["read-write", "read-only", "primary", "standby", "prefer-standby"] as const;

const PORT = /^\d{1,5}$/;

/** The parts of a postgres:// or postgresql:// URL, or a reason it is not one (never echoing it). */
export function parsePgUrl(raw: string): PgUrl | { error: string } {
  const scheme = /^(postgres|postgresql):\/\//i.exec(raw);
  if (!scheme) return { error: "must be a postgres:// or postgresql:// URL with a host" };
  const rest = raw.slice(scheme[0].length);
  const authority = rest.split(/[/?#]/, 1)[0]!;
  const at = authority.lastIndexOf("@");
  // postgres.js takes the hosts from after the first @: one more would be read differently by it.
  if (authority.indexOf("@") !== at) return { error: "has an unencoded @ in its user or password (write it as %40)" };
  const hostList = authority.slice(at + 1);
  if (hostList === "") return { error: "must be a postgres:// or postgresql:// URL with a host" };
  const hosts: PgUrlHost[] = [];
  for (const part of hostList.split(",")) {
    const parsed = hostPort(part);
    if (!parsed) return { error: "has a host list that is not host[:port],host[:port],…" };
    hosts.push(parsed);
  }
  // The rest is an ordinary URL once the list is reduced to its first host, as postgres.js does.
  let url: URL;
  try {
    url = new URL(`${scheme[0]}${authority.slice(0, at + 1)}${hostList.split(",")[0]}${rest.slice(authority.length)}`);
  } catch {
    return { error: "must be a postgres:// or postgresql:// URL with a host" };
  }
  const tsa = url.searchParams.get("target_session_attrs");
  if (tsa !== null && !(TARGET_SESSION_ATTRS as readonly string[]).includes(tsa)) {
    return { error: `has an unsupported target_session_attrs (one of ${TARGET_SESSION_ATTRS.join(", ")})` };
  }
  let user: string;
  let database: string;
  try {
    user = decodeURIComponent(url.username);
    database = decodeURIComponent(url.pathname.slice(1));
  } catch {
    return { error: "has a user or database name that is not valid percent-encoding" };
  }
  return { hosts, user, database, params: url.searchParams };
}

function hostPort(part: string): PgUrlHost | null {
  let host: string;
  let port: string | null = null;
  if (part.startsWith("[")) {
    // [IPv6]:port
    const close = part.indexOf("]");
    if (close < 0) return null;
    host = part.slice(0, close + 1);
    const after = part.slice(close + 1);
    if (after !== "") {
      if (!after.startsWith(":")) return null;
      port = after.slice(1);
    }
  } else {
    const colon = part.lastIndexOf(":");
    host = colon < 0 ? part : part.slice(0, colon);
    if (colon >= 0) port = part.slice(colon + 1);
  }
  if (host === "" || /[\s/@?#]/.test(host)) return null;
  if (port === null) return { host, port: null };
  if (!PORT.test(port) || Number(port) < 1 || Number(port) > 65535) return null;
  return { host, port: Number(port) };
}

/** `host:port,host:port` of a parsed URL, for messages and logs. */
export function hostsOf(url: PgUrl): string {
  return url.hosts.map((h) => (h.port === null ? h.host : `${h.host}:${h.port}`)).join(",");
}

/** `postgres://user@db1:5432,db2/keyward`: the URL without its password or parameters, for messages. */
export function describePgUrl(raw: string): string {
  const url = parsePgUrl(raw);
  if ("error" in url) return "(unparsable URL)";
  return `postgres://${url.user ? `${encodeURIComponent(url.user)}@` : ""}${hostsOf(url)}/${encodeURIComponent(url.database)}`;
}
