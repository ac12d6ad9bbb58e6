// Child process for test/db/pg-migrate.test.ts: waits until the shared start instant (argv[3], epoch
// ms) so the three workers race for real, runs the PostgreSQL migrations on argv[2], prints the result.
import { openPostgres } from "../../src/db/pg";
import { runPgMigrations } from "../../src/db/migrate.pg";

const [url, startAt] = [process.argv[2]!, Number(process.argv[3])];
const handle = openPostgres(url, { max: 2 });
await handle.ping(); // connect before the start line, so the race is over the migrations themselves
await Bun.sleep(Math.max(0, startAt - Date.now()));
try {
  const applied = await runPgMigrations(handle.sql, Date.now());
  console.log(JSON.stringify(applied));
} finally {
  await handle.close();
}
