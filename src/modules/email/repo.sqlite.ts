import { asc, eq } from "drizzle-orm";
import { lazyStatement, type DbHandle } from "../../db/client";
import { emailTemplates } from "../../db/schema";
import type { EmailTemplateOverride, EmailTemplateRepo } from "./repo";

export function createEmailTemplateRepo(handle: DbHandle): EmailTemplateRepo {
  const { db } = handle;
  // Read for every email delivered (email/context.ts): prepared once.
  const listAll = lazyStatement(() => db.select().from(emailTemplates).orderBy(asc(emailTemplates.name)).prepare());
  return {
    async list() {
      return listAll().all();
    },
    // The unit of work's BEGIN IMMEDIATE holds the write lock already.
    async lock(name) {
      return (db.select().from(emailTemplates).where(eq(emailTemplates.name, name)).get() as EmailTemplateOverride | undefined) ?? null;
    },
    async upsert(o) {
      db.insert(emailTemplates)
        .values(o)
        .onConflictDoUpdate({ target: emailTemplates.name, set: { subject: o.subject, body: o.body, updatedAt: o.updatedAt } })
        .run();
      return o;
    },
    async delete(name) {
      const [gone] = db.delete(emailTemplates).where(eq(emailTemplates.name, name)).returning().all();
      return gone ?? null;
    },
  };
}
