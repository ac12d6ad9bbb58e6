// Subcommands: serve (default), migrate, backup, api-key create, --help.
// Output contract: `api-key create` prints only the key on stdout and `backup` only the file path, so
// `KEY=$(keyward api-key create …)` works; every log line and message of the one-shot commands goes
// to stderr. `serve` logs JSON lines to stdout, the usual place for a service's logs.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { configFromProcessEnv, ConfigError, type Config } from "./config";
import { hostsOf, parsePgUrl } from "./db/pg-url";
import { createDeps, sqliteHandleOf } from "./container";
import type { Deps } from "./deps";
import { isDatabaseFailure, isDatabaseUnavailable } from "./db/errors";
import { startServer, type RunningServer } from "./server";
import { createPassThreads } from "./jobs/pass-thread";
import { runLifecycle } from "./modules/lifecycle/service";
import { startScheduler, type Scheduler } from "./jobs/scheduler";
import { warnIfEmailIsOnlyLogged } from "./modules/email/handler";
import { systemClock } from "./shared/clock";
import { createLogger, type Logger } from "./shared/logger";
import { SCOPES, SYSTEM_ACTOR, type Scope } from "./shared/actor";
import { isAppError } from "./shared/errors";
import { createApiKey } from "./modules/api-keys/service";
import { describeDemo, loadDemo } from "./demo";
import { openDatabase } from "./db/client";
import { runMigrations } from "./db/migrate";
import { backupDatabase } from "./db/backup";
import { GENERATED_MASTER_KEY_FILE, MasterKeyMismatchError, masterKeySource } from "./modules/keys/secrets";

const HELP = `Keyward — self-hosted licensing and software distribution

Usage: keyward [command] [options]

Commands:
  serve                         Start the HTTP service (default)
  migrate                       Apply database migrations and exit
  backup FILE                   Write a consistent copy of the database to FILE (safe while serving)
  api-key create --scopes LIST [--product ID] [--name NAME]
                                Create an admin API key and print it once (stdout).
                                LIST is comma-separated: ${SCOPES.join(", ")}
  db copy --to URL              Copy the SQLite database into an empty PostgreSQL database
                                (URL: postgres://…); see docs/operations.md
  demo                          Load a demo product, plans, licenses and signed releases, and print
                                an admin API key and curl commands to try them (idempotent)
  --help, -h                    Show this help

Configuration comes from the environment (and .env); see .env.example.`;

const API_KEY_USAGE = `usage: keyward api-key create --scopes LIST [--product ID] [--name NAME]   (LIST: ${SCOPES.join(", ")})`;

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  if (i >= 0) return args[i + 1];
  const eq = args.find((a) => a.startsWith(`${name}=`));
  return eq?.slice(name.length + 1);
}

function loadConfigOrNull(): Readonly<Config> | null {
  try {
    return configFromProcessEnv();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      return null;
    }
    throw e;
  }
}

const stderrSink = (line: string) => process.stderr.write(line + "\n");

/** Returns an exit code, or null when the process should keep running (serve). */
export async function runCli(argv: string[]): Promise<number | null> {
  const [command = "serve", ...rest] = argv;
  if (command === "--help" || command === "-h" || command === "help") {
    console.log(HELP);
    return 0;
  }
  if (!["serve", "migrate", "backup", "api-key", "demo", "db"].includes(command)) {
    console.error(`unknown command: ${command}\n\n${HELP}`);
    return 2;
  }
  const config = loadConfigOrNull();
  if (!config) return 2;
  const now = () => systemClock.now();

  // PostgreSQL (DATABASE_URL, or db copy's target) only with the driver Keyward repairs (db/driver-repairs.pg.ts).
  if (config.databaseUrl || command === "db") {
    const { driverRepairProblem } = await import("./db/driver-repairs.pg");
    const problem = await driverRepairProblem();
    if (problem) {
      if (command === "serve") createLogger(config.logLevel, undefined, now).error("cannot use PostgreSQL", { error: problem });
      else console.error(`cannot use PostgreSQL: ${problem}`);
      return 1;
    }
  }

  if (command === "serve") return serve(config, createLogger(config.logLevel, undefined, now));
  // One-shot commands: a database they cannot open is one line on stderr and exit 1, not a stack
  // trace (serve logs it and waits for it, see depsWhenDatabaseAnswers).
  try {
    return await runCommand(command, rest, config, now);
  } catch (e) {
    if (e instanceof MasterKeyMismatchError) {
      console.error(`${MASTER_KEY_MISMATCH}${describeLocation(databaseLocation(config))}: ${e.message}; the key used: ${masterKeySource(config)}`);
      return 1;
    }
    // db/pg.ts assertSupportedServer and db/migrate.ts (checked by name: the PostgreSQL modules load
    // only when used).
    if (e instanceof Error && (e.name === "UnsupportedServerError" || e.name === "NewerSchemaError")) {
      console.error(`cannot use the database${describeLocation(databaseLocation(config))}: ${e.message}`);
      return 1;
    }
    if (!isDatabaseFailure(e)) throw e;
    const { error, code } = describeFailure(e);
    console.error(`cannot open the database${describeLocation(databaseLocation(config))}: ${error}${typeof code === "string" ? ` (${code})` : ""}`);
    return 1;
  }
}

/** A one-shot command (every one but serve); returns its exit code. */
async function runCommand(command: string, rest: string[], config: Readonly<Config>, now: () => Date): Promise<number> {
  switch (command) {
    case "migrate": {
      if (config.databaseUrl) {
        // The PostgreSQL modules load only when they are used (see createDeps in container.ts).
        const [{ openPostgres, assertSupportedServer }, { runPgMigrations }] = await Promise.all([import("./db/pg"), import("./db/migrate.pg")]);
        const pg = openPostgres(config.databaseUrl, { max: 1 });
        try {
          await assertSupportedServer(pg.sql);
          const applied = await runPgMigrations(pg.sql, systemClock.nowMs());
          for (const m of applied) console.log(`${m.appliedNow ? "applied" : "up to date"}  ${m.tag}`);
        } finally {
          await pg.close();
        }
        return 0;
      }
      const db = openDatabase(config.databasePath);
      try {
        const applied = runMigrations(db.sqlite, systemClock.nowMs());
        for (const m of applied) console.log(`${m.appliedNow ? "applied" : "up to date"}  ${m.tag}`);
      } finally {
        db.close();
      }
      return 0;
    }
    case "db": {
      const { runDbCommand } = await import("./db/copy");
      return runDbCommand(rest, config.databasePath, createLogger(config.logLevel, stderrSink, now));
    }
    case "demo": {
      const deps = await createDeps(config, systemClock, createLogger(config.logLevel, stderrSink, now));
      try {
        console.log(describeDemo(await loadDemo(deps), config.baseUrl));
        return 0;
      } catch (e) {
        if (!isAppError(e)) throw e;
        // e.g. STORAGE_DRIVER=none: the demo's releases need storage.
        console.error(`${e.code}: ${e.message}`);
        return 1;
      } finally {
        await deps.db.close();
      }
    }
    case "backup": {
      const target = rest[0];
      if (!target) {
        console.error("usage: keyward backup FILE");
        return 2;
      }
      if (config.databaseUrl) {
        // PostgreSQL has its own consistent online backup tools; this command copies the SQLite file.
        console.error("backup copies the SQLite database; with DATABASE_URL use pg_dump (see docs/operations.md)");
        return 1;
      }
      if (!existsSync(config.databasePath)) {
        console.error(`no database at ${config.databasePath}`);
        return 1;
      }
      const db = openDatabase(config.databasePath);
      try {
        const { path, bytes } = backupDatabase(db.sqlite, target);
        console.log(path);
        // Secrets in the copy are sealed under the master key: a restore without it cannot use them.
        const keyFile = join(config.dataDir, GENERATED_MASTER_KEY_FILE);
        console.error(`Backup written (${bytes} bytes). Keep the master key (RELEASE_KEY_ENCRYPTION_KEY or ${keyFile}) backed up separately.`);
        return 0;
      } catch (e) {
        console.error((e as Error).message);
        return 1;
      } finally {
        db.close();
      }
    }
    default: {
      if (rest[0] !== "create") {
        console.error(API_KEY_USAGE);
        return 2;
      }
      const scopes = (flag(rest, "--scopes") ?? "").split(",").map((s) => s.trim()).filter(Boolean);
      const bad = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
      if (scopes.length === 0 || bad.length) {
        console.error(`--scopes must list one or more of: ${SCOPES.join(", ")}${bad.length ? ` (unknown: ${bad.join(", ")})` : ""}`);
        return 2;
      }
      const deps = await createDeps(config, systemClock, createLogger(config.logLevel, stderrSink, now));
      try {
        const { record, key } = await createApiKey(deps, SYSTEM_ACTOR, {
          name: flag(rest, "--name") ?? "cli",
          scopes: scopes as Scope[],
          productId: flag(rest, "--product") ?? null,
        });
        console.log(key);
        console.error(`Created API key ${record.id} (${record.scopes.join(", ")}${record.productId ? `, product ${record.productId}` : ""}). It is shown only once.`);
        return 0;
      } catch (e) {
        if (!isAppError(e)) throw e;
        // e.g. --product names no product: the service's own message, not a stack trace.
        console.error(`${e.code}: ${e.message}${e.details ? ` ${JSON.stringify(e.details)}` : ""}`);
        return 2;
      } finally {
        await deps.db.close();
      }
    }
  }
}

/**
 * A promise rejected with no handler ends a Bun process, and with it every request in flight on this
 * node. The ones seen so far came from error paths when the database went away (a driver's own
 * queries, a statement started before another was awaited), where the request that owned the
 * promise had already been answered or failed. A server logs such a rejection and keeps serving.
 */
export function logUnhandledRejections(logger: Logger): void {
  process.on("unhandledRejection", (reason) => logger.error("unhandled rejection", { error: reason }));
}

/** How long after listening start-up ends: `serve` schedules the job passes (JOBS) and drops start-up's leftovers. */
export const JOBS_START_DELAY_MS = 500;

/** How long `serve` waits for a database that cannot answer yet (starting, restarting, unreachable). */
export const STARTUP_DATABASE_WAIT_MS = 60_000;

/** A node whose master key is not the deployment's: every node and every restart must use the one the data was sealed with. */
const MASTER_KEY_MISMATCH = "the master key is not the one this database was sealed with (every node needs the deployment's RELEASE_KEY_ENCRYPTION_KEY)";

/** An error's message and driver code, for a log line. */
const describeFailure = (e: unknown): { error: string; code: unknown } => ({ error: (e as Error)?.message ?? String(e), code: (e as { code?: unknown })?.code });

const describeLocation = (where: Record<string, string>) => (Object.keys(where).length ? ` (${Object.entries(where).map(([k, v]) => `${k} ${v}`).join(", ")})` : "");

/** Where the database is, for a log line: the host and database of DATABASE_URL (never its password), or the SQLite file. */
function databaseLocation(config: Readonly<Config>): Record<string, string> {
  if (!config.databaseUrl) return { file: config.databasePath };
  const url = parsePgUrl(config.databaseUrl);
  return "error" in url ? {} : { host: hostsOf(url), database: url.database };
}

/**
 * Opens the database (and migrates it) for `serve`. A database that cannot answer yet (a server
 * still starting, restarting or unreachable, a lock held by another process) is retried with a
 * growing pause, up to `waitMs`, so a node started before its database comes up when the database
 * does. Any other failure (wrong password, no such database, an unreadable file) is reported at once.
 * Returns null after logging why, for `serve` to exit 1 without a stack trace.
 */
export async function depsWhenDatabaseAnswers(config: Readonly<Config>, logger: Logger, waitMs = STARTUP_DATABASE_WAIT_MS): Promise<Deps | null> {
  const deadline = systemClock.monotonicMs() + waitMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await createDeps(config, systemClock, logger);
    } catch (e) {
      const { error, code } = describeFailure(e);
      const pause = Math.min(2_000, 100 * 2 ** attempt);
      if (isDatabaseUnavailable(e) && systemClock.monotonicMs() + pause < deadline) {
        logger.warn("database unavailable at start; retrying", { ...databaseLocation(config), attempt, retryInMs: pause, error, code });
        await Bun.sleep(pause);
        continue;
      }
      if (e instanceof MasterKeyMismatchError) {
        logger.error(MASTER_KEY_MISMATCH, { ...databaseLocation(config), masterKey: masterKeySource(config), error });
        return null;
      }
      logger.error("cannot open the database", { ...databaseLocation(config), error, code });
      return null;
    }
  }
}

/**
 * Starts the service. SIGTERM/SIGINT stop it gracefully (server.ts: stop accepting, finish in-flight
 * requests within SHUTDOWN_GRACE_MS, close the database) and exit 0; a second signal exits at once.
 */
async function serve(config: Readonly<Config>, logger: Logger): Promise<number | null> {
  logUnhandledRejections(logger);
  const deps = await depsWhenDatabaseAnswers(config, logger);
  if (!deps) return 1;
  // The lifecycle pass runs on a thread of its own, off the event loop that serves requests.
  deps.passThreads = createPassThreads({
    config,
    logger: deps.logger,
    gate: sqliteHandleOf(deps.db)?.backgroundGate ?? null,
    checkpointThread: sqliteHandleOf(deps.db)?.checkpointer != null,
    nudge: () => deps.outboxNudge.nudge(),
    inProcess: (now, signal) => runLifecycle(deps, now, { signal }),
  });
  let server: RunningServer;
  // Background job passes (JOBS): stopped by server.stop() after in-flight requests, before the
  // database closes.
  let scheduler: Scheduler | null = null;
  let schedulerStart: ReturnType<typeof setTimeout> | undefined;
  try {
    server = startServer(deps, {
      onStop: () => {
        clearTimeout(schedulerStart);
        return scheduler?.stop();
      },
    });
  } catch (e) {
    // EADDRINUSE and friends: say which address, not a stack trace.
    logger.error("cannot listen", { host: config.host, port: config.port, error: (e as Error).message });
    await deps.db.close();
    return 1;
  }
  // Start-up ends JOBS_START_DELAY_MS after listening. Then the job passes and the delivery worker
  // start, not before the first request is answered: their first statements (the worker's poll, the
  // lease reads) would otherwise run before it. A message written in between (a sign-in code) is
  // found by the worker's first poll; the nudge below only makes that poll immediate. And then
  // JavaScriptCore is asked to drop what start-up left behind, at its next idle moment (Bun.shrink:
  // the code of functions that ran once, module evaluation's garbage): measured on the release
  // executable, idle RSS 60.6 → 58.8 MB, and the next requests re-link their code from the embedded
  // bytecode (about 1 ms once; docs/performance.md, "Start-up").
  schedulerStart = setTimeout(() => {
    if (config.jobs) {
      scheduler = startScheduler(deps);
      deps.outboxNudge.nudge();
    }
    Bun.shrink();
  }, JOBS_START_DELAY_MS);
  warnIfEmailIsOnlyLogged(config, logger);
  // The release build starts with JavaScriptCore's JIT tier-up thresholds scaled up
  // (--compile-jit-policy in scripts/build.ts) because start-up code runs once and compiling it is
  // wasted work. Once listening, start-up is over: from here on the JIT works as usual. (A no-op
  // under `bun src/main.ts`, which starts at the normal policy.)
  Bun.unsafe.setJITPolicy(1);
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn("second signal: exiting without waiting", { signal });
      process.exit(1);
    }
    stopping = true;
    logger.info("shutting down", { signal, graceMs: config.shutdownGraceMs });
    server.stop().then(
      () => {
        logger.info("stopped");
        process.exit(0);
      },
      (e: unknown) => {
        logger.error("shutdown failed", { error: e });
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  // Logged only once the signal handlers are in place: a supervisor that acts on this line can stop us.
  logger.info("keyward listening", { url: server.url, dataDir: config.dataDir, jobs: config.jobs });
  return null;
}
