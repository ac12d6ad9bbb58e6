import { asc, eq } from "drizzle-orm";
import { immediate, lazyStatement, type DbHandle } from "../../db/client";
import { emailTemplates } from "../../db/schema";
import { writeEffects } from "../outbox/write.sqlite";
import type { EmailTemplateOverride, EmailTemplateRepo } from "./repo";

export function createEmailTemplateRepo(handle: DbHandle): EmailTemplateRepo {
  const { db } = handle;
  const get = (name: string): EmailTemplateOverride | null => db.select().from(emailTemplates).where(eq(emailTemplates.name, name)).get() ?? null;
  // Read for every email delivered (email/context.ts): prepared once.
  const listAll = lazyStatement(() => db.select().from(emailTemplates).orderBy(asc(emailTemplates.name)).prepare());
  return {
    async list() {
      return listAll().all();
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
