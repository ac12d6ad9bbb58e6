import { asc, eq } from "drizzle-orm";
import { immediate, type DbHandle } from "../../db/client";
import { emailTemplates } from "../../db/schema";
import { writeEffects } from "../outbox/write.sqlite";
import type { EmailTemplateOverride, EmailTemplateRepo } from "./repo";

export function createEmailTemplateRepo(handle: DbHandle): EmailTemplateRepo {
  const { db } = handle;
  const get = (name: string): EmailTemplateOverride | null => db.select().from(emailTemplates).where(eq(emailTemplates.name, name)).get() ?? null;
  return {
    async list() {
      return db.select().from(emailTemplates).orderBy(asc(emailTemplates.name)).all();
    },
    async put(o, effects) {
      return immediate(handle, () => {
        const before = get(o.name);
        db.insert(emailTemplates)
          .values(o)
          .onConflictDoUpdate({ target: emailTemplates.name, set: { subject: o.subject, body: o.body, updatedAt: o.updatedAt } })
          .run();
        writeEffects(db, effects(before));
        return o;
      });
    },
    async remove(name, effects) {
      return immediate(handle, () => {
        const [gone] = db.delete(emailTemplates).where(eq(emailTemplates.name, name)).returning().all();
        if (!gone) return false;
        writeEffects(db, effects(gone));
        return true;
      });
    },
  };
}
