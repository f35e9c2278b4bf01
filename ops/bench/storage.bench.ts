/**
 * `npm run bench -- storage`: bytes per stored event, for the capacity plan's storage a month. The demo generator
 * (`friction demo --events`, ops/demo-data.ts: one site, 30 days, sessions, signals, rollups, scores, issues) fills
 * 1. the embedded PGlite with TimescaleDB (the hypertable path: `events` and `signals` are hypertables with daily
 *    chunks, compressed by the policy after 35 days, segmented by site): sizes before, then every chunk compressed
 *    with `compress_chunk` (what the policy does to a month once it is 35 days old) and the sizes again;
 * 2. a scratch database on the PostgreSQL server (no TimescaleDB there: plain tables, nothing compressed).
 * Per table: bytes per event (heap, indexes and TOAST; a hypertable's over all its chunks), then the month's storage
 * for 100M, 1B and 10B events.
 * Environment: BENCH_STORAGE_EVENTS (200000), BENCH_STORAGE_TARGETS (embedded,postgres).
 */
import os from 'node:os';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { openDatabase, type DatabaseHandle } from '../../shared/db/connection.ts';
import { migrateToLatest } from '../../shared/db/migrator.ts';
import { insertOrg, provisionSite } from '../../shared/tenancy/provision.ts';
import { createLogger } from '../../shared/logger.ts';
import { writeDemoData } from '../demo-data.ts';
import { ADMIN_URL, admin, withDb } from './harness.ts';

/** What the processor writes per event, raw and derived; the rest (orgs, keys, deploys) does not grow with events. */
const TABLES = [
  'events',
  'signals',
  'sessions',
  'explore_session_state',
  'explore_session_buckets',
  'page_viewers',
  'page_scores',
  'score_history',
  'ux_issues',
  'page_elements',
] as const;
/** The hypertables TimescaleDB compresses (migration 0001: compress after 35 days, segmented by site). */
const COMPRESSED = ['events', 'signals'] as const;
const MONTHS = [100e6, 1e9, 10e9];
const say = (line: string) => process.stderr.write(`storage: ${line}\n`);

type Sizes = Map<string, number>;

async function isHypertable(db: Kysely<Database>, table: string): Promise<boolean> {
  const { rows } = await sql<{ ok: boolean }>`select exists (
      select 1 from pg_extension where extname = 'timescaledb'
    ) and exists (
      select 1 from timescaledb_information.hypertables where hypertable_name = ${table}
    ) as ok`
    .execute(db)
    .catch(() => ({ rows: [{ ok: false }] }));
  return rows[0]?.ok ?? false;
}

/** Bytes of every table (heap + indexes + TOAST; a hypertable's summed over its chunks, compressed ones included). */
async function tableSizes(db: Kysely<Database>): Promise<Sizes> {
  const out: Sizes = new Map();
  for (const t of TABLES) {
    const hyper = await isHypertable(db, t);
    const { rows } = hyper
      ? await sql<{
          n: number;
        }>`select coalesce(total_bytes, 0)::float8 as n from hypertable_detailed_size(${t}::regclass)`.execute(db)
      : await sql<{ n: number }>`select pg_total_relation_size(${t}::regclass)::float8 as n`.execute(db);
    out.set(t, Number(rows[0]?.n ?? 0));
  }
  return out;
}

async function fill(handle: DatabaseHandle, url: string | undefined, events: number) {
  await migrateToLatest(handle.db);
  const orgId = await insertOrg(handle.db, { name: 'storage bench', plan: 'enterprise' });
  const { siteId } = await provisionSite(handle.db, { orgId, name: 'storage', url: 'https://storage.example' });
  const t0 = performance.now();
  const report = await writeDemoData(handle, url, { events, siteId, days: 30, threads: 2 }, createLogger('silent'));
  say(
    `${report.events} events, ${report.signals} signals, ${report.sessions} sessions in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
  );
  await sql`vacuum analyze`.execute(handle.db);
  return report.events;
}

interface Column {
  name: string;
  events: number;
  sizes: Sizes;
}

export async function runBench(): Promise<void> {
  const events = Number(process.env.BENCH_STORAGE_EVENTS ?? 200_000);
  const targets = (process.env.BENCH_STORAGE_TARGETS ?? 'embedded,postgres').split(',');
  const columns: Column[] = [];
  const notes: string[] = [];

  if (targets.includes('embedded')) {
    say(`embedded PGlite + TimescaleDB: ${events} demo events`);
    const handle = await openDatabase({ dataDir: '', embeddedPath: 'memory://' });
    try {
      const n = await fill(handle, undefined, events);
      columns.push({ name: 'embedded, uncompressed', events: n, sizes: await tableSizes(handle.db) });
      try {
        const chunks: Record<string, number> = {};
        for (const t of COMPRESSED) {
          const { rows } = await sql<{
            c: string;
          }>`select compress_chunk(c, if_not_compressed => true)::text as c from show_chunks(${t}::regclass) c`.execute(
            handle.db,
          );
          chunks[t] = rows.length;
        }
        await sql`vacuum analyze`.execute(handle.db);
        columns.push({ name: 'embedded, compressed', events: n, sizes: await tableSizes(handle.db) });
        const { rows } = await sql<{
          t: string;
          before: number;
          after: number;
        }>`select hypertable_name::text as t, before_compression_total_bytes::float8 as before, after_compression_total_bytes::float8 as after
            from timescaledb_information.hypertables h, hypertable_compression_stats(format('%I', h.hypertable_name)::regclass)
            where h.hypertable_name in ('events', 'signals')`.execute(handle.db);
        for (const r of rows)
          notes.push(
            `${r.t}: ${chunks[r.t] ?? 0} chunks compressed, ${fmtBytes(r.before)} → ${fmtBytes(r.after)} (chunk_compression_stats: ${(r.before / r.after).toFixed(1)}×)`,
          );
      } catch (err) {
        notes.push(`embedded TimescaleDB could not compress: ${(err as Error).message}`);
      }
    } finally {
      await handle.close();
    }
  }

  if (targets.includes('postgres')) {
    const name = `friction_storage_${Math.random().toString(36).slice(2, 10)}`;
    await admin(`create database ${name}`);
    const url = withDb(ADMIN_URL, name);
    try {
      const handle = await openDatabase({ url, dataDir: '' });
      try {
        const ts = await isHypertable(handle.db, 'events').catch(() => false);
        say(`PostgreSQL (${ts ? 'TimescaleDB' : 'no TimescaleDB: plain tables'}): ${events} demo events`);
        const n = await fill(handle, url, events);
        columns.push({
          name: ts ? 'PostgreSQL + TimescaleDB' : 'PostgreSQL, plain',
          events: n,
          sizes: await tableSizes(handle.db),
        });
      } finally {
        await handle.close();
      }
    } finally {
      await admin(`drop database if exists ${name} with (force)`).catch(() => {});
    }
  }

  const perEvent = (c: Column, tables: readonly string[]) =>
    tables.reduce((s, t) => s + (c.sizes.get(t) ?? 0), 0) / c.events;
  const w = 26;
  process.stdout.write(
    `\nstorage (demo data: one site, 30 days, ${columns[0]?.events ?? 0} events; ${os.cpus().length} cores, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')})\n  bytes per event by table`.padEnd(w) +
      columns.map((c) => c.name.padStart(w)).join('') +
      '\n',
  );
  for (const t of TABLES)
    process.stdout.write(
      `  ${t.padEnd(w - 2)}${columns.map((c) => perEvent(c, [t]).toFixed(1).padStart(w)).join('')}\n`,
    );
  const raw = ['events', 'signals'];
  process.stdout.write(
    `  ${'events + signals'.padEnd(w - 2)}${columns.map((c) => perEvent(c, raw).toFixed(1).padStart(w)).join('')}\n`,
  );
  process.stdout.write(
    `  ${'all of the above'.padEnd(w - 2)}${columns.map((c) => perEvent(c, TABLES).toFixed(1).padStart(w)).join('')}\n`,
  );
  for (const m of MONTHS)
    process.stdout.write(
      `  ${`${fmtCount(m)} events a month`.padEnd(w - 2)}${columns.map((c) => fmtBytes(perEvent(c, TABLES) * m).padStart(w)).join('')}\n`,
    );
  for (const n of notes) process.stdout.write(`  ${n}\n`);
}

function fmtBytes(b: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];
  let i = 0;
  while (b >= 1000 && i < units.length - 1) {
    b /= 1000;
    i++;
  }
  return `${b.toFixed(b < 10 ? 1 : 0)} ${units[i]}`;
}

function fmtCount(n: number): string {
  return n >= 1e9 ? `${n / 1e9}B` : `${n / 1e6}M`;
}
