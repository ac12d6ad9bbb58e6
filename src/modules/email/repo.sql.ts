// EmailTemplateRepo on both engines, written once against the query seam (db/dialect/query.ts).
import { eq } from "drizzle-orm";
import type { QueryDialect } from "../../db/dialect/query";
import type { EmailTemplateRepo } from "./repo";

export function createEmailTemplateRepo(d: QueryDialect): EmailTemplateRepo {
  const { db } = d;
  const { emailTemplates } = d.tables;
  // Read for every email delivered (email/context.ts): prepared once.
  const listAll = d.prepared("email_templates_all", () => db.select().from(emailTemplates).orderBy(d.byteOrder(emailTemplates.name)));
  return {
    async list() {
      return listAll({});
    },
    async lock(name) {
      // By name, not only the row: the first override of a template has no row to lock yet, and two
      // edits at once must still take turns (each audits what it replaced).
      await d.lockKey(`email_template:${name}`);
      return (await d.forUpdate(db.select().from(emailTemplates).where(eq(emailTemplates.name, name))))[0] ?? null;
    },
    async upsert(o) {
      await db.insert(emailTemplates).values(o).onConflictDoUpdate({ target: emailTemplates.name, set: { subject: o.subject, body: o.body, updatedAt: o.updatedAt } });
      return o;
    },
    async delete(name) {
      return (await db.delete(emailTemplates).where(eq(emailTemplates.name, name)).returning())[0] ?? null;
    },
  };
}
