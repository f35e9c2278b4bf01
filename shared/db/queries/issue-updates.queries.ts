import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../database.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** A line of an issue's history: who changed it (the engine, the triage, a deploy's verdict, a person), how and why. */
export interface IssueUpdate {
  issueId: string;
  source: 'engine' | 'triage' | 'deploy' | 'api';
  kind: string;
  changes: Record<string, unknown>;
  reason?: string;
}

/**
 * Lines of issues' history, the one writer of `issue_updates` (processor and API). Column arrays (unnest) keep the
 * statement's text and parameter count the same however many lines a batch writes.
 */
export async function insertIssueUpdates(db: Db, updates: readonly IssueUpdate[]): Promise<void> {
  if (updates.length === 0) return;
  const c = <T>(f: (u: IssueUpdate) => T) => updates.map(f);
  await sql`
    insert into issue_updates (issue_id, source, kind, changes, reason)
    select * from unnest(${c((u) => u.issueId)}::uuid[], ${c((u) => u.source)}::text[], ${c((u) => u.kind)}::text[],
                         ${c((u) => JSON.stringify(u.changes))}::jsonb[], ${c((u) => u.reason ?? null)}::text[])`.execute(
    db,
  );
}
