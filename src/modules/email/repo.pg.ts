import { eq, sql } from "drizzle-orm";
import type { PgHandle } from "../../db/pg";
import { emailTemplates } from "../../db/schema-pg";
import { writeEffectsPg } from "../outbox/write.pg";
import type { EmailTemplateRepo } from "./repo";

export function createEmailTemplateRepoPg(handle: PgHandle): EmailTemplateRepo {
  const { db } = handle;
  return {
    async list() {
      return db.select().from(emailTemplates).orderBy(sql`${emailTemplates.name} COLLATE "C"`);
    },
    async put(o, effects) {
      return db.transaction(async (tx) => {
        // Locks the row when it exists; a racing first insert is settled by the upsert (the audit
        // row then says "created" twice, which is what each caller saw).
        const [before] = await tx.select().from(emailTemplates).where(eq(emailTemplates.name, o.name)).for("update");
        await tx
          .insert(emailTemplates)
          .values(o)
          .onConflictDoUpdate({ target: emailTemplates.name, set: { subject: o.subject, body: o.body, updatedAt: o.updatedAt } });
        await writeEffectsPg(tx, effects(before ?? null));
        return o;
      });
    },
    async remove(name, effects) {
      return db.transaction(async (tx) => {
        const [gone] = await tx.delete(emailTemplates).where(eq(emailTemplates.name, name)).returning();
        if (!gone) return false;
        await writeEffectsPg(tx, effects(gone));
        return true;
      });
    },
  };
}
