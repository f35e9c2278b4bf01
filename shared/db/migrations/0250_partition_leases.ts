import { sql, type Kysely } from 'kysely';

/**
 * The fencing token of each event partition (issue 32). Processors lease partitions through a NATS KV bucket; the
 * lease decides who may consume, this row decides whose writes count: a new owner raises `epoch` before it
 * consumes, and every batch transaction of the partition reads the row (FOR SHARE) and refuses to commit unless the
 * epoch is still its own. A stale owner (paused past its lease) therefore cannot write after its successor began.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table partition_leases (
    partition integer primary key,
    epoch bigint not null,
    owner text not null,
    claimed_at timestamptz not null default now()
  )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists partition_leases`.execute(db);
}
