import { sql, type Kysely } from 'kysely';

/**
 * A version of the scores answer per site and environment, so the API can keep the encoded answer of
 * `GET /v1/query/scores` in memory and answer a repeated request with one indexed read (api/read-models/
 * scores-answer-cache.ts has the whole reasoning). The answer reads exactly two tables: `page_current_scores` and
 * `site_score_days`; a row trigger on each gives the written rows' (site, environment) a new version in the writing
 * transaction, so every writer (the processor's batch and tick, erasure's rewrite, recompute, the demo derive, a
 * site's deletion, a later migration) bumps it without knowing of it, and the version becomes visible at the same
 * commit as the rows.
 *
 * - Exact, unlike a `max(updated_at)`: the version row is written by the transaction itself, so a reader's snapshot
 *   sees the new version exactly when it sees the new rows; a transaction that started earlier and commits later
 *   cannot leave a reader with new rows under an old version.
 * - Values from one sequence: never reused, even if a row were deleted and made again (a cached answer under a
 *   reused value would be served for other rows).
 * - Once per transaction and key: `xact` holds the transaction that wrote the version, and a transaction-local setting
 *   the key bumped last, so a batch writing 2,000 pages bumps its site once (the other rows skip the upsert, or find
 *   their own transaction in the row and change nothing).
 * - The row lock is held to commit, so two transactions writing one site's scores queue from the first bump. The
 *   processor writes a site from one partition only, under a lease (ARCHITECTURE: "all state for one site lives in one
 *   partition"), and its batch transactions already lock the site's `site_score_days` rows in key order; its tick
 *   applies erasures (the rewrite of the site's scores) in that same process. The API's erasure deletes raw rows only
 *   (events, sessions), never these tables, so it takes no version lock; `friction recompute --write` is run with the
 *   site's processor stopped (and queued on the same `site_score_days` rows before). Nothing that ran in parallel
 *   before now waits.
 * - TRUNCATE fires no row trigger: a statement trigger gives every site a new version. TimescaleDB's retention
 *   (embedded: `site_score_days` keeps 730 days) drops chunks with no trigger at all: the reader serves a stored answer
 *   only while every day it read is younger than that retention (the database's own clock), see the cache.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create sequence score_answer_version_seq`.execute(db);
  await sql`
    create table score_answer_versions (
      site_id uuid not null, environment text not null, version bigint not null, xact bigint not null,
      constraint score_answer_versions_pkey primary key (site_id, environment)
    )`.execute(db);
  // The key bumped last in this transaction is remembered in a transaction-local setting, so the rows after the first
  // of a batch (2,000 pages of one site) skip the upsert; a rolled-back savepoint rolls the setting back with the row,
  // and `xact` keeps a key bumped before another one from being bumped twice.
  await sql`create function score_answer_bump(s uuid, e text) returns void language plpgsql as $fn$
begin
  if current_setting('score_answer.bumped', true) is distinct from s::text || '/' || e then
    insert into score_answer_versions as v (site_id, environment, version, xact)
    values (s, e, nextval('score_answer_version_seq'), pg_current_xact_id()::text::bigint)
    on conflict (site_id, environment) do update set version = excluded.version, xact = excluded.xact
    where v.xact <> excluded.xact;
    perform set_config('score_answer.bumped', s::text || '/' || e, true);
  end if;
end
$fn$`.execute(db);
  await sql`create function score_answer_bump_rows() returns trigger language plpgsql as $fn$
begin
  if tg_op in ('UPDATE', 'DELETE') then
    perform score_answer_bump(old.site_id, old.environment);
  end if;
  if tg_op = 'INSERT' or (tg_op = 'UPDATE' and (new.site_id, new.environment) is distinct from (old.site_id, old.environment)) then
    perform score_answer_bump(new.site_id, new.environment);
  end if;
  return null;
end
$fn$`.execute(db);
  await sql`create function score_answer_bump_all() returns trigger language plpgsql as $fn$
begin
  update score_answer_versions set version = nextval('score_answer_version_seq'), xact = pg_current_xact_id()::text::bigint;
  return null;
end
$fn$`.execute(db);
  for (const table of ['page_current_scores', 'site_score_days']) {
    await sql`
      create trigger ${sql.raw(`${table}_answer_version`)} after insert or update or delete on ${sql.table(table)}
      for each row execute function score_answer_bump_rows()`.execute(db);
    await sql`
      create trigger ${sql.raw(`${table}_answer_version_truncate`)} after truncate on ${sql.table(table)}
      for each statement execute function score_answer_bump_all()`.execute(db);
  }
  // Every key that has rows now gets a version; a key without a row is never served from memory (the reader reads
  // no version), so rows written before this migration can never hide behind a missing version.
  await sql`
    insert into score_answer_versions (site_id, environment, version, xact)
    select site_id, environment, nextval('score_answer_version_seq'), pg_current_xact_id()::text::bigint
    from (select site_id, environment from page_current_scores union select site_id, environment from site_score_days) k`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['page_current_scores', 'site_score_days']) {
    await sql`drop trigger if exists ${sql.raw(`${table}_answer_version`)} on ${sql.table(table)}`.execute(db);
    await sql`drop trigger if exists ${sql.raw(`${table}_answer_version_truncate`)} on ${sql.table(table)}`.execute(db);
  }
  await sql`drop function if exists score_answer_bump_all()`.execute(db);
  await sql`drop function if exists score_answer_bump_rows()`.execute(db);
  await sql`drop function if exists score_answer_bump(uuid, text)`.execute(db);
  await sql`drop table if exists score_answer_versions`.execute(db);
  await sql`drop sequence if exists score_answer_version_seq`.execute(db);
}
