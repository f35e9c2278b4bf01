import { sql, type Kysely } from 'kysely';

/**
 * The secondary indexes `friction demo --events` drops while it COPYs millions of rows into empty tables and builds
 * again afterwards (ops/demo-indexes.ts): each definition is kept here, in the transaction that drops it, until the
 * index exists again, so a run killed halfway leaves them for the next run to build.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table demo_deferred_indexes (name text primary key, definition text not null)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists demo_deferred_indexes`.execute(db);
}
