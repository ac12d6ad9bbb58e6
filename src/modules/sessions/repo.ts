// Signed-in sessions (DECISIONS: Sessions and sign-in). The cookie holds a random token; the row holds
// only its keyed hash, so a database leak yields no usable session.

export interface Session {
  id: string;
  userId: string;
  /** otp, dev, invite, oauth:<provider>. */
  method: string;
  ip: string | null;
  userAgent: string | null;
  createdAt: Date;
  lastSeenAt: Date;
  idleExpiresAt: Date;
  absoluteExpiresAt: Date;
}

export interface NewSession extends Session {
  tokenHash: string;
}

export interface SessionFilter {
  userId?: string;
  /** Only sessions still alive at this moment. */
  aliveAt: Date;
  cursor?: string;
  limit: number;
}

export interface SessionRepo {
  create(session: NewSession): Promise<Session>;
  findByTokenHash(tokenHash: string): Promise<Session | null>;
  get(id: string): Promise<Session | null>;
  /** Sliding renewal: records use and moves the idle expiry (never past the absolute one). */
  touch(id: string, lastSeenAt: Date, idleExpiresAt: Date): Promise<void>;
  /** Ends one session; the ended session, or null when there was none. */
  revoke(id: string): Promise<Session | null>;
  /** Ends every session of a user ("sign out everywhere"); how many ended. */
  revokeAllForUser(userId: string): Promise<number>;
  /** Live sessions, newest first, keyset-paginated. */
  list(filter: SessionFilter): Promise<{ items: Session[]; nextCursor: string | null }>;
  /**
   * One batch of the prune-sessions pass: deletes up to `limit` sessions past either expiry, by
   * primary key, in one short statement (each expiry has its index); how many went.
   */
  pruneExpired(now: Date, limit: number): Promise<number>;
}
