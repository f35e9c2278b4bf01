import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../database.ts';
import type { DegradationEventTable } from '../tables/operations.table.ts';
import { newId } from '../../ids.ts';

type Db = Kysely<Database> | Transaction<Database>;
export type DegradationRow = Selectable<DegradationEventTable>;

/** Degradation kinds, each with what `subject` names. */
export const DEGRADATION_KINDS = [
  'bus_unreachable',
  'database_unreachable',
  'processor_lag',
  'partition_paused',
  'dead_letters',
  'endpoint_disabled',
  'over_quota',
] as const;
export type DegradationKind = (typeof DEGRADATION_KINDS)[number];

/**
 * Records that something degraded. At most one open event per (kind, subject): while it is open, a second
 * report is the same event (nothing new is stored). Returns true when a new event was opened.
 */
export async function openDegradation(
  db: Db,
  e: {
    orgId: string | null;
    kind: DegradationKind;
    subject: string;
    message: string;
    details?: Record<string, unknown>;
    at: Date;
  },
): Promise<boolean> {
  const r = await db
    .insertInto('degradation_events')
    .values({
      id: newId(),
      org_id: e.orgId,
      kind: e.kind,
      subject: e.subject,
      message: e.message.slice(0, 1000),
      started_at: e.at,
      recovered_at: null,
      details: JSON.stringify(e.details ?? {}),
    })
    .onConflict((oc) => oc.columns(['kind', 'subject']).where('recovered_at', 'is', null).doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Closes the open event of (kind, subject), if any. Returns true when one was closed. */
export async function recoverDegradation(db: Db, kind: DegradationKind, subject: string, at: Date): Promise<boolean> {
  const r = await db
    .updateTable('degradation_events')
    .set({ recovered_at: at })
    .where('kind', '=', kind)
    .where('subject', '=', subject)
    .where('recovered_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** The org's events and the instance-wide ones: every open event, then the recent recovered ones, newest first. */
export async function listDegradation(db: Db, orgId: string, limit: number, since: Date): Promise<DegradationRow[]> {
  return db
    .selectFrom('degradation_events')
    .selectAll()
    .where((eb) => eb.or([eb('org_id', '=', orgId), eb('org_id', 'is', null)]))
    .where((eb) =>
      eb.or([eb('recovered_at', 'is', null), eb('started_at', '>=', since), eb('recovered_at', '>=', since)]),
    )
    .orderBy(({ eb }) => eb.case().when('recovered_at', 'is', null).then(0).else(1).end())
    .orderBy('started_at', 'desc')
    .limit(limit)
    .execute();
}
