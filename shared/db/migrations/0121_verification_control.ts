import { sql, type Kysely } from 'kysely';

/**
 * Which comparison decided a verification record: `concurrent` (the sessions still on the old version in the same
 * hours as the new version's, a conditional test stratified by hour) or `before_window` (the issue's own before
 * window or quiet period). Every record before this migration was a before-window comparison.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table deploy_verifications add column control text not null default 'before_window' check (control in ('concurrent', 'before_window'))`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table deploy_verifications drop column control`.execute(db);
}
