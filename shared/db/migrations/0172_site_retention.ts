import { sql, type Kysely } from 'kysely';

/**
 * Per-site retention of what the SDK observed (issue 30 item 8): `retention_days` (31 to 90; null: the instance's
 * 90 days). The processor's tick deletes a site's events, signals and sessions older than it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table sites add column retention_days integer check (retention_days between 31 and 90)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table sites drop column if exists retention_days`.execute(db);
}
