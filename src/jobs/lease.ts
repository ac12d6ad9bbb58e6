// The lease that makes one node run a job pass at a time (DECISIONS: Data engines and jobs — "a lease
// row (owner, expiry, fence counter) makes one node run a pass at a time on either engine").
//
// One row per pass name in `job_leases`. Every claim is ONE conditional write (an upsert whose update
// only applies when the lease is free or expired), so it is atomic on both engines without locks held
// across the pass itself. Each successful claim increments `fence`; `finish` writes only while the
// fence is still the caller's, so a node whose lease expired and was taken over cannot overwrite the
// newer run's record. A pass must finish within its lease: nothing renews it while it runs.

export interface JobLease {
  name: string;
  /** The node holding the lease; null when free (finished, or never claimed). */
  owner: string | null;
  leaseUntil: Date | null;
  /** Incremented by every claim (scheduled or admin). */
  fence: number;
  /** The last scheduled slot claimed; admin runs leave it alone. */
  lastSlotAt: Date | null;
  lastStartedAt: Date | null;
  lastFinishedAt: Date | null;
  lastResult: Record<string, unknown> | null;
}

export interface JobLeaseRepo {
  /**
   * Claims `name` for the scheduled `slot`: succeeds only when the lease is free or expired at `now`
   * AND no slot at or after `slot` was claimed before (so a slot runs once across all nodes, even when
   * the first runner has already finished). Sets owner, leaseUntil, lastSlotAt = slot,
   * lastStartedAt = now; returns the new fence, or null when refused.
   */
  claim(name: string, owner: string, slot: Date, leaseUntil: Date, now: Date): Promise<{ fence: number } | null>;
  /**
   * Claims `name` for an admin "run now": only the lease must be free or expired; the slot record is
   * neither checked nor changed, so the schedule goes on as if the admin run had not happened.
   * Returns the new fence, or null while another run holds the lease.
   */
  claimNow(name: string, owner: string, leaseUntil: Date, now: Date): Promise<{ fence: number } | null>;
  /**
   * Records the result and releases the lease, only if `owner` still holds fence `fence`; false when
   * the lease was taken over meanwhile (nothing is written).
   */
  finish(name: string, owner: string, fence: number, result: Record<string, unknown>, now: Date): Promise<boolean>;
  /** Every pass that was ever claimed, by name (byte order). */
  list(): Promise<JobLease[]>;
}
