import { and, asc, count, eq, isNull, lte, or, sql } from "drizzle-orm";
import { immediate, type DbHandle } from "../../db/client";
import { activations } from "../../db/schema";
import { writeAudit } from "../audit/write.sqlite";
import { createLicenseAccessRepo } from "../license-api/repo.sqlite";
import { newId } from "../../shared/ids";
import type { Activation, ActivationRepo, VerifyLookup } from "./repo";

export function createActivationRepo(handle: DbHandle): ActivationRepo {
  const { db } = handle;
  const access = createLicenseAccessRepo(handle);
  const p = {
    seenByIdentifier: db
      .select({ id: activations.id, lastSeenAt: activations.lastSeenAt })
      .from(activations)
      .where(and(eq(activations.licenseId, sql.placeholder("licenseId")), eq(activations.identifier, sql.placeholder("identifier"))))
      .prepare(),
    byIdentifier: db
      .select()
      .from(activations)
      .where(and(eq(activations.licenseId, sql.placeholder("licenseId")), eq(activations.identifier, sql.placeholder("identifier"))))
      .prepare(),
    countByLicense: db
      .select({ n: count() })
      .from(activations)
      .where(eq(activations.licenseId, sql.placeholder("licenseId")))
      .prepare(),
    touch: db
      .update(activations)
      .set({ lastSeenAt: sql`${sql.placeholder("at")}` })
      .where(
        and(
          eq(activations.id, sql.placeholder("id")),
          or(isNull(activations.lastSeenAt), lte(activations.lastSeenAt, sql`${sql.placeholder("notSeenSince")}`)),
        ),
      )
      .prepare(),
  };

  return {
    activate(input, check) {
      return immediate(handle, () => {
        const current = access.findById(input.licenseId);
        check(current);
        const lic = current!;
        const existing = p.byIdentifier.get({ licenseId: input.licenseId, identifier: input.identifier });
        if (existing) {
          // Re-activation takes no slot (spec: Activation table); it refreshes last_seen and the label.
          const label = input.label ?? existing.label;
          db.update(activations).set({ label, lastSeenAt: input.at }).where(eq(activations.id, existing.id)).run();
          return { kind: "already_activated", activation: { ...existing, label, lastSeenAt: input.at }, access: lic };
        }
        const max = lic.plan.maxActivations;
        if (max !== null && p.countByLicense.get({ licenseId: input.licenseId })!.n >= max) return { kind: "limit", max };
        const activation: Activation = {
          id: newId(),
          licenseId: input.licenseId,
          identifier: input.identifier,
          identifierType: input.identifierType,
          label: input.label,
          createdAt: input.at,
          lastSeenAt: input.at,
        };
        db.insert(activations).values(activation).run();
        return { kind: "activated", activation, access: lic };
      });
    },
    findForVerify(hash, identifier) {
      // Three indexed single-table reads (see license-api/repo.sqlite.ts for why not a join); the
      // plan is read only once the license and the activation exist.
      const license = access.licenseByKeyHash(hash);
      if (!license) return null;
      const activation = p.seenByIdentifier.get({ licenseId: license.id, identifier }) ?? null;
      if (!activation) return null;
      const plan = access.planById(license.planId);
      return plan ? ({ license, plan, activation } satisfies VerifyLookup) : null;
    },
    touch(id, at, notSeenSince) {
      p.touch.run({ id, at: at.getTime(), notSeenSince: notSeenSince.getTime() });
    },
    deactivate(licenseId, identifier) {
      const gone = db
        .delete(activations)
        .where(and(eq(activations.licenseId, licenseId), eq(activations.identifier, identifier)))
        .returning({ id: activations.id })
        .all();
      return gone.length > 0;
    },
    listByLicense(licenseId) {
      return db.select().from(activations).where(eq(activations.licenseId, licenseId)).orderBy(asc(activations.createdAt), asc(activations.id)).all();
    },
    remove(licenseId, activationId, audit) {
      return immediate(handle, () => {
        const [removed] = db
          .delete(activations)
          .where(and(eq(activations.id, activationId), eq(activations.licenseId, licenseId)))
          .returning()
          .all();
        if (!removed) return null;
        writeAudit(db, audit(removed));
        return removed;
      });
    },
  };
}
