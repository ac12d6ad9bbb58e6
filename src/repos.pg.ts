// The PostgreSQL repository set (DATABASE_URL=postgres://…); createSqliteRepos in container.ts is
// its SQLite counterpart. Each factory lives in its module's repo.pg.ts.
import type { PgHandle } from "./db/pg";
import type { Repos } from "./deps";
import { createLicenseAccessRepoPg } from "./modules/license-api/repo.pg";
import { createJobLeaseRepoPg } from "./jobs/lease.pg";
import { createOutboxRepoPg } from "./modules/outbox/repo.pg";

export function createPgRepos(handle: PgHandle): Partial<Repos> {
  return {
    licenseAccess: createLicenseAccessRepoPg(handle),
    jobLeases: createJobLeaseRepoPg(handle),
    outbox: createOutboxRepoPg(handle),
  };
}
