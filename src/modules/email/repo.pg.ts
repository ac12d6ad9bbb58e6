import { eq, sql } from "drizzle-orm";
import type { PgHandle } from "../../db/pg";
import { emailTemplates } from "../../db/schema-pg";
import type { EmailTemplateRepo } from "./repo";

export function createEmailTemplateRepoPg(handle: PgHandle): EmailTemplateRepo {
  const { db } = handle;
  return {
    async list() {
      return db.select().from(emailTemplates).orderBy(sql`${emailTemplates.name} COLLATE "C"`);
    },
    async lock(name) {
      const [row] = await db.select().from(emailTemplates).where(eq(emailTemplates.name, name)).for("update");
      return row ?? null;
    },
    async upsert(o) {
      await db
        .insert(emailTemplates)
        .values(o)
        .onConflictDoUpdate({ target: emailTemplates.name, set: { subject: o.subject, body: o.body, updatedAt: o.updatedAt } });
      return o;
    },
    async delete(name) {
      const [gone] = await db.delete(emailTemplates).where(eq(emailTemplates.name, name)).returning();
      return gone ?? null;
    },
  };
}
