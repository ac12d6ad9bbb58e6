// Repairs for installed dependencies, applied by `npm install` (package.json "postinstall") and
// checked by the release build (scripts/build.ts) and the test suite. Plain Node.js, no
// dependencies: it runs right after npm has installed the packages, before anything else.
//
// Each repair names the package version it was written for and replaces exact text. A file already
// repaired is left alone; a file that matches neither the original nor the repaired text (another
// version, an upstream fix) stops the install, so a repair can never silently stop applying.
//
//   node scripts/patch-deps.mjs           apply (idempotent)
//   node scripts/patch-deps.mjs --check   exit 1 unless every repair is in place
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const MARK = "/* keyward-patch */";

/**
 * postgres.js 3.4.9: a connection whose socket closes while a small write is still buffered (flushed
 * on setImmediate) is broken for good, and a statement of a dead socket can be answered by the next
 * one (porsager/postgres#1133, #1193, #1208; the upstream fixes are unreleased: 3.4.9 is the latest
 * release as of 2026-11-28):
 * 1. terminate() and closed() cancel the pending flush but leave its handle and the buffered bytes:
 *    write() then never schedules a flush again, so every reconnect's start-up message stays
 *    buffered and ends in CONNECT_TIMEOUT (measured: 5 s per statement, for ever).
 * 2. A flush that runs without a socket throws from a timer: an uncaught TypeError that ends the
 *    process. It now fails the connection's statements with CONNECTION_CLOSED instead.
 * 3. closed() after a socket error leaves the statement in progress, and statements sent after the
 *    error, unsettled; the next connection's start-up (its ReadyForQuery) then resolves that stale
 *    statement with an empty result, as if it had run, or fails it with the dead backend's error.
 *    Every statement still pending on a closed socket is now failed, and the state is reset.
 * 4. Every (re)connect first reads the server's array types with a query of the driver's own whose
 *    promise nobody awaits: when the connection dies during that query, its rejection is unhandled
 *    and ends the process (seen: a node of three exiting with the server's 57P01 after
 *    pg_terminate_backend). The failure is already delivered to the statements waiting for that
 *    connection; the driver's own promise now handles it.
 * 5. A connection that the other side closes during its start-up, without an error (a TCP proxy
 *    or load balancer in front of PostgreSQL with no server behind it), reconnects at once, for
 *    ever, holding the statement it was opened for: that request hangs while the process spins.
 *    With one host to try, the statement now fails with CONNECTION_CLOSED and the connection
 *    waits out the reconnect delay like any other closed one (several hosts: the next is tried).
 * 9. (An addition, for src/db/pg.ts.) A statement sent on a connection whose network then goes
 *    silent (a partition, a host that vanished during a failover: no RST, no FIN) waits until the
 *    kernel gives up retransmitting, about 15 minutes on Linux, and so does every statement queued
 *    behind it: postgres.js has no statement timeout, and TCP keepalive does not probe a connection
 *    with unacknowledged data. With the option `stall_timeout` (seconds; unset: off), a connection
 *    with a statement outstanding that has received nothing from the server for that long fails its
 *    statements with CONNECTION_STALLED and is closed, and the pool reconnects. One check per
 *    connection runs only while statements are outstanding.
 */
const POSTGRES_CONNECTION = [
  {
    name: "terminate(): forget the cancelled flush and its bytes",
    from: "    clearImmediate(nextWriteTimer)\n    if (socket) {",
    to: `    clearImmediate(nextWriteTimer)\n    ${MARK} chunk = nextWriteTimer = null\n    if (socket) {`,
  },
  {
    name: "closed(): forget the cancelled flush and its bytes",
    from: "    incomings = null\n    clearImmediate(nextWriteTimer)\n",
    to: `    incomings = null\n    clearImmediate(nextWriteTimer)\n    ${MARK} chunk = nextWriteTimer = null\n`,
  },
  {
    name: "nextWrite(): no socket fails the statements instead of throwing from a timer",
    from: "  function nextWrite(fn) {\n    const x = socket.write(chunk, fn)",
    to: `  function nextWrite(fn) {\n    ${MARK} if (!socket) {\n      chunk = nextWriteTimer = null\n      error(Errors.connection('CONNECTION_CLOSED', options))\n      return false\n    }\n    const x = socket.write(chunk, fn)`,
  },
  {
    name: "closed(): fail every statement still pending, then reset the statement state",
    from: "    !hadError && (query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))\n",
    // The leading semicolon matters: the line before is `return reconnect()` without one.
    to: `    ${MARK} ;(query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))\n    query = results = errorResponse = null\n    result = new Result()\n`,
  },
  {
    name: "closed(): a start-up closed without an error fails its statement instead of reconnecting for ever",
    from: "    if (initial)\n      return reconnect()\n",
    to: `    if (initial && options.host.length > 1) ${MARK}\n      return reconnect()\n    ;initial && error(Errors.connection('CONNECTION_CLOSED', options, socket))\n`,
  },
  {
    name: "ReadyForQuery(): the start-up's array-types query never rejects unhandled",
    from: "        return fetchArrayTypes()\n",
    to: `        return fetchArrayTypes().catch(() => {}) ${MARK}\n`,
  },
  {
    name: "stall_timeout: a watchdog per connection",
    from: "      , connectTimer = timer(connectTimedOut, options.connect_timeout)\n",
    to: `      , connectTimer = timer(connectTimedOut, options.connect_timeout)\n      , stallWatch = stallWatchdog() ${MARK}\n`,
  },
  {
    name: "stall_timeout: the watchdog fails and closes a connection the server has been silent on",
    from: "  function connectTimedOut() {",
    to: `  ${MARK} function stallWatchdog() {
    const ms = (options.stall_timeout || 0) * 1000
    let since = 0
      , check = null
    const stop = () => {
      since = 0
      check && (clearInterval(check), check = null)
    }
    const tick = () => {
      if (!since || !(query || sent.length))
        return stop()
      if (performance.now() - since < ms || !socket)
        return
      stop()
      // Through the socket's error event, as any socket failure: its statements fail with this
      // error, and the close that follows reconnects (a statement sent in between fails with
      // CONNECTION_CLOSED, as on any connection that failed).
      socket.destroy(Errors.connection('CONNECTION_STALLED', options, socket))
    }
    return {
      sent() {
        if (!ms)
          return
        since || (since = performance.now())
        check || (check = setInterval(tick, Math.max(ms / 4, 50)), check.unref && check.unref())
      },
      heard() {
        since && (since = performance.now())
      },
      stop
    }
  }

  function connectTimedOut() {`,
  },
  {
    name: "stall_timeout: a write starts the watch",
    from: "  function write(x, fn) {\n    chunk = chunk ? Buffer.concat([chunk, x]) : Buffer.from(x)\n",
    to: `  function write(x, fn) {\n    stallWatch.sent() ${MARK}\n    chunk = chunk ? Buffer.concat([chunk, x]) : Buffer.from(x)\n`,
  },
  {
    name: "stall_timeout: any byte from the server restarts it",
    from: "  function data(x) {\n",
    to: `  function data(x) {\n    stallWatch.heard() ${MARK}\n`,
  },
  {
    name: "stall_timeout: a closed connection stops it",
    from: "    idleTimer.cancel()\n    lifeTimer.cancel()\n    connectTimer.cancel()\n",
    to: `    idleTimer.cancel()\n    lifeTimer.cancel()\n    connectTimer.cancel()\n    stallWatch.stop() ${MARK}\n`,
  },
];

/**
 * postgres.js 3.4.9, the pool (index.js), around sql.reserve() (Keyward's transactions run on
 * reserved connections, src/db/pg.ts); unfixed in any release (3.4.9 is the latest as of 2026-11-28):
 * 6. A reserve() waiting for a connection is handed to a closing connection as the statement to run
 *    once it has reconnected (onclose), and taken off the queue; the reconnected connection then
 *    drops it (it runs no statement for a reservation) and the reserve() never settles: the
 *    transaction hangs for ever (seen: two of four clients hung after the server ended their
 *    connections; porsager/postgres#1195). It now stays queued, as reserve() itself queues it, for
 *    the next open connection.
 * 7. A reserve() rejected (its connection failed to start) stays queued; the next connection to open
 *    is then handed to the settled promise and lost to the pool. A settled reserve() now leaves the
 *    queue, and a connection handed to one goes on to the next waiting statement. (Found here; no
 *    upstream report of this one yet. Same queue as #1195.)
 * 8. A reserved handle whose connection closed still sends statements to that connection object,
 *    which the pool reconnects for other work: a late ROLLBACK or INSERT of a dead transaction
 *    would run on a connection now serving someone else. Once its reservation has ended (closed,
 *    released) a handle refuses statements with CONNECTION_CLOSED (porsager/postgres#1168: a
 *    handle released after its connection closed hands it back to the pool; #1186: a transaction's
 *    statements on a closed reserved connection).
 * 10. The option `stall_timeout` of repair 9 is kept by the options parser (which drops unknown ones).
 */
const POSTGRES_POOL = [
  {
    name: "onclose(): a waiting reserve() stays queued when a closed connection reconnects for it",
    from: "    queries.length && connect(c, queries.shift())\n",
    to: `    ${MARK} if (queries.length) {\n      const query = queries.shift()\n      query.reserve && queries.push(query)\n      connect(c, query)\n    }\n`,
  },
  {
    name: "reserve(): a settled reservation leaves the queue and never swallows a connection",
    from: "        const query = { reserve: resolve, reject }\n",
    to: `        ${MARK} let settled = false\n        const query = {\n          reserve: x => settled ? onopen(x) : (settled = true, resolve(x)),\n          reject: e => settled || (settled = true, queries.remove(query), reject(e))\n        }\n`,
  },
  {
    name: "reserve(): a handle whose reservation ended refuses statements",
    from: "    c.reserved.release = true\n\n    const sql = Sql(handler)\n    sql.release = () => {\n      c.reserved = null\n      onopen(c)\n    }\n\n    return sql\n\n    function handler(q) {\n",
    to: `    c.reserved.release = true\n    ${MARK} const reservation = c.reserved\n\n    const sql = Sql(handler)\n    sql.release = () => {\n      c.reserved = null\n      onopen(c)\n    }\n\n    return sql\n\n    function handler(q) {\n      ${MARK} if (c.reserved !== reservation) return q.reject(Errors.connection('CONNECTION_CLOSED', options))\n`,
  },  {
    name: "parseOptions(): keep stall_timeout",
    from: "    keep_alive      : 60,\n",
    to: `    keep_alive      : 60,\n    stall_timeout   : null, ${MARK}\n`,
  },
];

export const REPAIRS = [
  {
    pkg: "postgres",
    version: "3.4.9",
    // src/ is what Bun loads ("bun" export condition); the CommonJS and Workers builds get the same repair.
    files: ["src/connection.js", "cjs/src/connection.js", "cf/src/connection.js"],
    edits: POSTGRES_CONNECTION,
  },
  {
    pkg: "postgres",
    version: "3.4.9",
    files: ["src/index.js", "cjs/src/index.js", "cf/src/index.js"],
    edits: POSTGRES_POOL,
  },
];

const count = (text, part) => text.split(part).length - 1;

/** The command that applies the repairs (npm install runs it as postinstall; --ignore-scripts skips it). */
export const REPAIR_COMMAND = "node scripts/patch-deps.mjs";

/**
 * Applies (or with check, only inspects) every repair; returns the problems found. `packageDir`
 * says where a package is installed (default: root's node_modules); src/db/driver-repairs.pg.ts points
 * it at the copy the runtime resolves.
 */
export function patchDependencies({ root = ROOT, check = false, packageDir = (pkg) => join(root, "node_modules", pkg) } = {}) {
  const problems = [];
  const applied = [];
  for (const repair of REPAIRS) {
    const base = packageDir(repair.pkg);
    let version;
    try {
      version = JSON.parse(readFileSync(join(base, "package.json"), "utf8")).version;
    } catch {
      problems.push(`${repair.pkg} is not installed`);
      continue;
    }
    if (version !== repair.version) {
      problems.push(`${repair.pkg} is ${version}, the repair in scripts/patch-deps.mjs is for ${repair.version}: check whether ${version} fixes it, then update or drop the repair`);
      continue;
    }
    for (const file of repair.files) {
      const path = join(base, file);
      let text = readFileSync(path, "utf8");
      let changed = false;
      let refused = false;
      for (const edit of repair.edits) {
        if (count(text, edit.to) === 1) continue; // already repaired (the replacement carries MARK)
        if (count(text, edit.from) !== 1) {
          problems.push(`${repair.pkg}/${file}: "${edit.name}" does not apply (the text it replaces is not there exactly once)`);
          refused = true;
          continue;
        }
        if (check) {
          problems.push(`${repair.pkg}/${file}: "${edit.name}" is not applied (run: ${REPAIR_COMMAND})`);
          continue;
        }
        text = text.replace(edit.from, edit.to);
        changed = true;
      }
      // A file is written whole or not at all: never with some of its edits and not others.
      if (changed && !refused) {
        writeFileSync(path, text);
        applied.push(`${repair.pkg}/${file}`);
      }
    }
  }
  return { problems, applied };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const check = process.argv.includes("--check");
  const { problems, applied } = patchDependencies({ check });
  for (const file of applied) console.log(`patch-deps: repaired ${file}`);
  if (problems.length > 0) {
    for (const p of problems) console.error(`patch-deps: ${p}`);
    process.exit(1);
  }
}
