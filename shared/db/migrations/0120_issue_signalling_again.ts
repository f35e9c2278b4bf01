import { sql, type Kysely } from 'kysely';

/**
 * When a closed (resolved or verified) issue started signalling again: the engine's live rule (3 sessions with its
 * signal since it was closed) sets it for people to see. It no longer changes the status: `regressed` comes only
 * from a deploy look's regression test, with the grace period and version cohort the looks use. A value older than
 * the issue's `resolved_at` belongs to an earlier closure and is not shown.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table ux_issues add column signalling_again_at timestamptz`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table ux_issues drop column signalling_again_at`.execute(db);
}
