// Subcommands: serve (default), migrate, api-key create, --help.
import { configFromProcessEnv, ConfigError, type Config } from "./config";
import { createDeps } from "./container";
import { startServer } from "./server";
import { systemClock } from "./shared/clock";
import { createLogger } from "./shared/logger";
import { SCOPES, SYSTEM_ACTOR, type Scope } from "./shared/actor";
import { createApiKey } from "./modules/api-keys/service";
import { openDatabase } from "./db/client";
import { runMigrations } from "./db/migrate";

const HELP = `Keyward — self-hosted licensing and software distribution

Usage: keyward [command] [options]

Commands:
  serve                         Start the HTTP service (default)
  migrate                       Apply database migrations and exit
  api-key create --scopes LIST [--product ID] [--name NAME]
                                Create an admin API key and print it once.
                                LIST is comma-separated: ${SCOPES.join(", ")}
  --help, -h                    Show this help

Configuration comes from the environment (and .env); see .env.example.`;

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  if (i >= 0) return args[i + 1];
  const eq = args.find((a) => a.startsWith(`${name}=`));
  return eq?.slice(name.length + 1);
}

function loadConfigOrExit(): Readonly<Config> | null {
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

/** Returns an exit code, or null when the process should keep running (serve). */
export async function runCli(argv: string[]): Promise<number | null> {
  const [command = "serve", ...rest] = argv;
  if (command === "--help" || command === "-h" || command === "help") {
    console.log(HELP);
    return 0;
  }
  const config = loadConfigOrExit();
  if (!config) return 2;
  const logger = createLogger(config.logLevel, undefined, () => systemClock.now());

  switch (command) {
    case "serve": {
      const deps = createDeps(config, systemClock, logger);
      const server = startServer(deps);
      logger.info("keyward listening", { url: server.url, dataDir: config.dataDir });
      const shutdown = (signal: string) => {
        logger.info("shutting down", { signal });
        void server.stop().then(() => process.exit(0));
      };
      process.once("SIGTERM", () => shutdown("SIGTERM"));
      process.once("SIGINT", () => shutdown("SIGINT"));
      return null;
    }
    case "migrate": {
      const db = openDatabase(config.databasePath);
      try {
        const applied = runMigrations(db.sqlite, systemClock.nowMs());
        for (const m of applied) console.log(`${m.appliedNow ? "applied" : "up to date"}  ${m.tag}`);
      } finally {
        db.close();
      }
      return 0;
    }
    case "api-key": {
      if (rest[0] !== "create") {
        console.error("usage: keyward api-key create --scopes admin[,licenses:write,releases:write] [--product ID] [--name NAME]");
        return 2;
      }
      const scopes = (flag(rest, "--scopes") ?? "").split(",").map((s) => s.trim()).filter(Boolean);
      const bad = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
      if (scopes.length === 0 || bad.length) {
        console.error(`--scopes must list one or more of: ${SCOPES.join(", ")}${bad.length ? ` (unknown: ${bad.join(", ")})` : ""}`);
        return 2;
      }
      const deps = createDeps(config, systemClock, logger);
      try {
        const { record, key } = createApiKey(deps, SYSTEM_ACTOR, {
          name: flag(rest, "--name") ?? "cli",
          scopes: scopes as Scope[],
          productId: flag(rest, "--product") ?? null,
        });
        console.log(key);
        console.error(`Created API key ${record.id} (${record.scopes.join(", ")}${record.productId ? `, product ${record.productId}` : ""}). It is shown only once.`);
        return 0;
      } finally {
        deps.db.close();
      }
    }
    default:
      console.error(`unknown command: ${command}\n\n${HELP}`);
      return 2;
  }
}
