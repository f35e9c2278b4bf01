import { sql, type Kysely } from 'kysely';

/**
 * Frozen once merged. `sessions_started_idx` (site, started_at desc) becomes `sessions_recent_first_idx` (site,
 * started_at desc, id collate "C"): the Explorer lists a site's newest sessions in exactly that order (ties by id in
 * byte order, so every database answers alike), and with the index in that order the list stops at its limit
 * instead of sorting every session of the window. The usage count (sessions since a date) reads the same prefix.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index if not exists sessions_recent_first_idx on sessions (site_id, started_at desc, id collate "C")`.execute(
    db,
  );
  await sql`drop index if exists sessions_started_idx`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`create index if not exists sessions_started_idx on sessions (site_id, started_at desc)`.execute(db);
  await sql`drop index if exists sessions_recent_first_idx`.execute(db);
}
