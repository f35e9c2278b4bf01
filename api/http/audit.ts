import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import type { Principal } from './auth.ts';
import { redactSecrets } from '../../shared/auth/redact.ts';

type Db = Kysely<Database> | Transaction<Database>;

interface AuditEntry {
  orgId: string;
  siteId: string | null;
  actorType: 'user' | 'key';
  actorId: string | null;
  actor: string;
  action: string;
  targetType: string;
  targetId: string;
  summary: Record<string, unknown>;
}

/** Records one write; call it in the write's own transaction. */
export async function insertAuditEntry(db: Db, e: AuditEntry): Promise<void> {
  await db
    .insertInto('audit_log')
    .values({
      org_id: e.orgId,
      site_id: e.siteId,
      actor_type: e.actorType,
      actor_id: e.actorId,
      actor: e.actor,
      action: e.action,
      target_type: e.targetType,
      target_id: e.targetId,
      summary: JSON.stringify(e.summary),
    })
    .execute();
}

/**
 * Records a write by `principal` in the audit log, inside the write's transaction (sign-ins and sign-outs, which
 * write nothing else, pass the database itself). `summary` describes the
 * change (created fields, or `changes: { field: { from, to } }`); it passes through `redactSecrets` here, in the
 * one place every entry is written, so a route that forgets cannot put a secret into the log.
 */
export function audit(
  trx: Db,
  principal: Principal,
  e: {
    orgId: string;
    siteId: string | null;
    action: string;
    targetType: string;
    targetId: string;
    summary: Record<string, unknown>;
  },
): Promise<void> {
  return insertAuditEntry(trx, {
    ...e,
    summary: redactSecrets(e.summary),
    actorType: principal.kind,
    actorId: principal.kind === 'user' ? principal.userId : principal.keyId,
    actor: principal.label,
  });
}

/** `{ field: { from, to } }` for each field of `next` whose value differs from `prev`. */
export function diff(
  prev: Record<string, unknown>,
  next: Record<string, unknown>,
): Record<string, { from: unknown; to: unknown }> {
  const out: Record<string, { from: unknown; to: unknown }> = {};
  for (const [k, to] of Object.entries(next)) {
    if (to === undefined) continue;
    const from = prev[k] ?? null;
    if (JSON.stringify(from) !== JSON.stringify(to)) out[k] = { from, to };
  }
  return out;
}
