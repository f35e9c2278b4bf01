/**
 * `npm run bench -- processor`: the processor's batch work against its COPY floor, in alternating rounds in one
 * process (no stream: the messages are decoded from their JSON bytes as the consumer loop does, then stored by the
 * processor's own `storeBatch` with the engine sink). Each round stores the same SDK-shaped backlog from empty
 * tables with the processor's parallelism (one writer per partition, one transaction per fetch); the floor round
 * COPYs the same rows through `storeEvents` alone. Per round: events/s, the CPU per event of this process
 * (process.cpuUsage) and of the database's backends (/proc), and the ratio to the floor round beside it; the
 * machine is shared, so neighbouring rounds are compared and the CPU per event is the steadier figure.
 * BENCH_STATEMENTS=1 also prints, per statement kind, its count and client-observed time per event.
 * BENCH_WARMUP=0 leaves out the uncounted warm-up round of each (a cold start: JIT compilation counted in round 1).
 * BENCH_ONLY=processor runs the processor's rounds alone (for a CPU profile of its work without the floor's).
 * Environment: BENCH_EVENTS (40000), BENCH_ROUNDS (3), BENCH_PARTITIONS (4), BENCH_FETCH (the processor's default
 * PROCESSOR_BATCH_MESSAGES).
 */
import os from 'node:os';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { sql, type Kysely } from 'kysely';
import { EventBatchMessageSchema, type EventBatchMessage } from '../../shared/contracts/ingest.ts';
import { encode, safeDecode } from '../../shared/contracts/codec.ts';
import { partitionOf } from '../../shared/contracts/subjects.ts';
import type { Database } from '../../shared/db/database.ts';
import { pgBulkTransactions } from '../../shared/db/bulk.ts';
import { createLogger } from '../../shared/logger.ts';
import { PROCESSOR_BATCH_MESSAGES_DEFAULT } from '../../shared/config.ts';
import { storeEvents } from '../../processor/store/events.store.ts';
import { InDoubtEvents, storeBatch } from '../../processor/events.consumer.ts';
import { FrictionEngineSink } from '../../processor/engine-sink.ts';
import { AlertEvaluator } from '../../processor/alerts/alert-evaluator.ts';
import { benchSites, sdkBacklog } from './workload.ts';
import { databaseCpuBetween, databaseCpuSeconds, openBenchEnvironment } from './harness.ts';

const NATS_URL = process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222';
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

interface Round {
  rate: number;
  clientUs: number;
  databaseUs: number;
}

/** Nanoseconds a backend has run on a CPU so far (/proc schedstat: exact, unlike stat's clock ticks). */
function backendCpuNs(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    return Number.NaN;
  }
}

/**
 * Per statement kind (its first words): count, client-observed time and the CPU its backend spent on it (read
 * around each statement from the backend's /proc schedstat; one statement at a time per connection).
 */
const statements = new Map<string, { n: number; ms: number; dbNs: number }>();
let phase = '';
function profileStatements(): void {
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const first = args[0] as string | { text?: string; cursor?: unknown };
    const text =
      typeof first === 'string'
        ? first
        : (first?.text ?? (first && 'chunks' in (first as object) ? 'copy' : 'copy stream'));
    const kind = phase + text.replace(/\s+/g, ' ').trim().slice(0, 48);
    const pid = (this as unknown as { processID: number }).processID;
    const cpu0 = backendCpuNs(pid);
    const t0 = performance.now();
    const out = query.apply(this, args);
    const done = () => {
      const s = statements.get(kind) ?? { n: 0, ms: 0, dbNs: 0 };
      s.n++;
      s.ms += performance.now() - t0;
      s.dbNs += backendCpuNs(pid) - cpu0;
      statements.set(kind, s);
    };
    if (out && typeof (out as Promise<unknown>).then === 'function') (out as Promise<unknown>).then(done, done);
    else if (out && typeof (out as { on?: unknown }).on === 'function')
      (out as NodeJS.EventEmitter).on('finish', done).on('end', done);
    return out;
  } as typeof pg.Client.prototype.query;
}

/** Empties every table a round writes, so each round starts from the same database. */
async function emptyTables(db: Kysely<Database>): Promise<void> {
  await sql`truncate events, signals, sessions, page_scores, score_history, ux_issues, issue_updates, page_elements, outbox cascade`.execute(
    db,
  );
}

/** Runs `work` once per partition list concurrently, measuring rate and CPU per event of this process and PostgreSQL. */
async function measure(db: Kysely<Database>, events: number, work: () => Promise<unknown>): Promise<Round> {
  const dbCpu0 = await databaseCpuSeconds(db);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await work();
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const dbCpu = databaseCpuBetween(dbCpu0, await databaseCpuSeconds(db));
  return { rate: events / seconds, clientUs: (cpu.user + cpu.system) / events, databaseUs: (dbCpu * 1e6) / events };
}

export async function runBench(): Promise<void> {
  const total = Number(process.env.BENCH_EVENTS ?? 40_000);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const partitions = Number(process.env.BENCH_PARTITIONS ?? 4);
  const fetchSize = Number(process.env.BENCH_FETCH ?? PROCESSOR_BATCH_MESSAGES_DEFAULT);
  const bench = await openBenchEnvironment(NATS_URL);
  const { db, dbUrl } = bench;
  const pool = new pg.Pool({ connectionString: dbUrl, max: partitions });
  if (process.env.BENCH_STATEMENTS === '1') profileStatements();
  try {
    const { orgId, sites } = await benchSites(db, 8);
    const now = Date.now();
    const perPartition = Array.from(
      { length: partitions },
      () => [] as { msg: EventBatchMessage; bytes: Uint8Array }[],
    );
    let events = 0;
    for (const msg of sdkBacklog({ orgId, siteIds: sites.map((s) => s.siteId), total, now })) {
      perPartition[partitionOf(msg.site_id, partitions)]!.push({ msg, bytes: encode(msg) });
      events += msg.events.length;
    }
    const bulk = pgBulkTransactions(pool);
    const log = createLogger('silent');

    const floor = () =>
      Promise.all(
        perPartition.map(async (list) => {
          for (let i = 0; i < list.length; i += fetchSize)
            await bulk((tx) =>
              storeEvents(
                tx,
                list.slice(i, i + fetchSize).map((m) => m.msg),
              ),
            );
        }),
      );
    // As the processor runs it: one sink for every partition, messages decoded and validated from their bytes.
    const processor = () => {
      const sink = new FrictionEngineSink({ log, now: () => now, alerts: new AlertEvaluator({ log }) });
      return Promise.all(
        perPartition.map(async (list) => {
          const doubts = new InDoubtEvents();
          for (let i = 0; i < list.length; i += fetchSize) {
            const batches = list.slice(i, i + fetchSize).map((m) => {
              const r = safeDecode(EventBatchMessageSchema, m.bytes);
              if (!r.ok) throw new Error(r.error);
              return r.value;
            });
            await storeBatch(bulk, sink, batches, doubts);
          }
        }),
      );
    };

    const lines: string[] = [];
    const pairs: { floor: Round; processor: Round }[] = [];
    // One warm-up of each (JIT, caches, the tables' first pages), not counted.
    const only = process.env.BENCH_ONLY === 'processor';
    for (const run of process.env.BENCH_WARMUP === '0' ? [] : only ? [processor] : [floor, processor]) {
      await run();
      await emptyTables(db);
    }
    statements.clear();
    for (let r = 0; r < rounds; r++) {
      phase = 'floor: ';
      const f = only
        ? { rate: Number.NaN, clientUs: Number.NaN, databaseUs: Number.NaN }
        : await measure(db, events, floor);
      phase = '';
      if (!only) await emptyTables(db);
      phase = 'processor: ';
      const p = await measure(db, events, processor);
      phase = '';
      const written = (
        await sql<{
          outbox: number;
          issues: number;
          elements: number;
          sessions: number;
        }>`select (select count(*)::int from outbox) as outbox, (select count(*)::int from ux_issues) as issues,
        (select count(*)::int from page_elements) as elements, (select count(*)::int from sessions) as sessions`.execute(
          db,
        )
      ).rows[0]!;
      await emptyTables(db);
      pairs.push({ floor: f, processor: p });
      lines.push(
        `  round ${r + 1}: processor ${fmt(p.rate)} events/s, ${p.clientUs.toFixed(1)} + ${p.databaseUs.toFixed(1)} µs/event; floor ${fmt(f.rate)} events/s, ${f.clientUs.toFixed(1)} + ${f.databaseUs.toFixed(1)} µs/event; rate ratio ${(p.rate / f.rate).toFixed(2)}, CPU ratio ${((f.clientUs + f.databaseUs) / (p.clientUs + p.databaseUs)).toFixed(2)}; rows left: ${written.sessions} sessions, ${written.issues} issues, ${written.elements} elements, ${written.outbox} notifications`,
      );
    }
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    process.stdout.write(
      `\nprocessor rounds (${events} events in ${perPartition.reduce((n, l) => n + l.length, 0)} SDK batches, ${partitions} partitions, fetches of ${fetchSize}; ${os.cpus().length} cores, load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')})\n`,
    );
    for (const l of lines) process.stdout.write(`${l}\n`);
    process.stdout.write(
      `  median: rate ratio ${median(pairs.map((p) => p.processor.rate / p.floor.rate)).toFixed(2)}, CPU µs/event processor ${median(pairs.map((p) => p.processor.clientUs)).toFixed(1)} + ${median(pairs.map((p) => p.processor.databaseUs)).toFixed(1)}, floor ${median(pairs.map((p) => p.floor.clientUs)).toFixed(1)} + ${median(pairs.map((p) => p.floor.databaseUs)).toFixed(1)} (target rate ratio ≥ 0.6)\n`,
    );
    // Updates that stayed on their heap page without index entries (HOT) against all updates, per table, all rounds.
    const hot = await sql<{
      relname: string;
      ins: number;
      upd: number;
      hot: number;
    }>`select relname, n_tup_ins::int as ins, n_tup_upd::int as upd, n_tup_hot_upd::int as hot
      from pg_stat_user_tables where relname in ('sessions', 'page_scores', 'score_history', 'ux_issues', 'page_elements') order by relname`.execute(
      db,
    );
    process.stdout.write(
      `  rows inserted / updated / HOT-updated, all rounds: ${hot.rows.map((r) => `${r.relname} ${r.ins} / ${r.upd} / ${r.hot}`).join(', ')}\n`,
    );
    if (statements.size > 0) {
      process.stdout.write(
        `  statements (${rounds} rounds of each): backend CPU µs per event, client-observed µs per event, count per round\n`,
      );
      for (const [kind, s] of [...statements].sort((a, b) => b[1].dbNs - a[1].dbNs)) {
        process.stdout.write(
          `    ${(s.dbNs / 1000 / (events * rounds)).toFixed(2).padStart(6)}  ${((s.ms * 1000) / (events * rounds)).toFixed(1).padStart(6)}  ${String(Math.round(s.n / rounds)).padStart(5)}  ${kind}\n`,
        );
      }
    }
  } finally {
    await pool.end();
    await bench.close();
  }
}
