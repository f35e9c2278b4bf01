import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/database.ts';
import { insertSession } from '../db/queries/sessions.queries.ts';
import { newId } from '../ids.ts';
import type { InstanceKeys } from './instance-keys.ts';
import { signUserToken } from './jwt.ts';

type Db = Kysely<Database> | Transaction<Database>;

export interface SessionPolicy {
  /** Life of one token (JWT_TTL_SECONDS): short, so a leaked token is soon useless. */
  tokenTtlSec: number;
  /** Life of the session (SESSION_MAX_SECONDS): renewal stops there. */
  sessionMaxSec: number;
}

export interface IssuedToken {
  token: string;
  expiresAt: Date;
  sessionId: string;
  sessionExpiresAt: Date;
}

/**
 * Starts a session (a login) for the user and signs its first token, acting in `orgId`. The session is what logout
 * and a password change end: every token of it is refused from then on, however long it had left.
 */
export async function startSession(
  db: Db,
  keys: InstanceKeys,
  u: { userId: string; orgId: string },
  policy: SessionPolicy,
  now: Date,
): Promise<IssuedToken> {
  const sessionId = newId();
  // Whole seconds, like a token's exp, so a token capped by its session ends at the same instant.
  const sessionExpiresAt = new Date((Math.floor(now.getTime() / 1000) + policy.sessionMaxSec) * 1000);
  await insertSession(db, { id: sessionId, userId: u.userId, expiresAt: sessionExpiresAt });
  const t = signUserToken(
    await keys.jwtKey(),
    { ...u, sessionId, notAfter: sessionExpiresAt },
    policy.tokenTtlSec,
    now.getTime(),
  );
  return { ...t, sessionId, sessionExpiresAt };
}

/** A fresh token of a live session (renewal): same user, org and session, never past the session's end. */
export async function renewToken(
  keys: InstanceKeys,
  s: { userId: string; orgId: string; sessionId: string; sessionExpiresAt: Date },
  policy: SessionPolicy,
  now: Date,
): Promise<IssuedToken> {
  const t = signUserToken(
    await keys.jwtKey(),
    { ...s, notAfter: s.sessionExpiresAt },
    policy.tokenTtlSec,
    now.getTime(),
  );
  return { ...t, sessionId: s.sessionId, sessionExpiresAt: s.sessionExpiresAt };
}
