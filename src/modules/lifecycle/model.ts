import { t } from "../../http/schema";

const n = (description: string) => t.Integer({ minimum: 0, description });

export const LifecycleCountsSchema = t.Object(
  {
    scanned: n("Licenses looked at (a license can be looked at by more than one walk)"),
    trials_expired: n("Trials expired: past valid_until"),
    grace_expired: n("Active or past_due licenses expired: past valid_until + grace_days"),
    past_due_expired: n("Past_due licenses expired: unpaid for more than 30 days"),
    expiry_reminders: n("Expiry reminder emails written"),
    support_reminders: n("Support reminder emails written"),
    support_ended: n("Support-lapse notices (event license.support_ended and email) written"),
    dunning_emails: n("Dunning emails written (day 1, 7, 14 of a past_due episode)"),
    batches: n("Transactions run to apply actions, at most 10 actions each"),
  },
  { title: "LifecycleRun" },
);
