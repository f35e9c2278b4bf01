/**
 * `npm run bench -- scale`: 1, 2 and 4 processor workers (separate processes taking partition leases on the real
 * NATS) drain the same SDK-shaped backlog from the same stream, beside the COPY floor of the same rows in the same
 * run. Per row: events/s drained, the ratio to one worker, the workers' CPU per event and the database's (its share
 * of the CPU the drain took, so a reader can tell whether the database was the bottleneck), and the rate against the
 * floor. Then the takeover: one of two workers is SIGKILLed and the time until the other holds every partition is
 * printed against its bound, twice the lease TTL plus the rebuild.
 * Each round starts from empty tables and fresh consumers; the workers are started and their leases settle (a fair
 * share each), then they drain a warm-up backlog (BENCH_WARM_UP_EVENTS, 8000; not measured: the JIT compiling a
 * fresh process's hot paths is a cost per worker). Then the workers are stopped (SIGSTOP, the drain rounds' lease TTL
 * long enough to outlast it), the measured backlog is published, and they are continued: the drain measures consuming
 * the same whole backlog in every round, without the publisher on the cores and without the batch sizes depending on
 * how fast it published. Per row also the workers' CPU split between their JavaScript threads and their other threads
 * (V8's compilers and collector helpers), and the events per batch transaction.
 * Environment: BENCH_EVENTS (40000), BENCH_WORKERS (1,2,4), BENCH_ROUNDS (1: the worker counts again in turn, medians
 * compared), BENCH_LEASE_TTL_MS (10000, the default lease TTL), BENCH_TAKEOVER (0 skips the takeover).
 */
import { freePort } from '../../shared/testing/processes.ts';
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { sql, type Kysely } from 'kysely';
import { Kvm } from '@nats-io/kv';
import type { EventBatchMessage } from '../../shared/contracts/ingest.ts';
import { encode } from '../../shared/contracts/codec.ts';
import { topology } from '../../shared/contracts/subjects.ts';
import type { Database } from '../../shared/db/database.ts';
import { insertOrg, provisionSite } from '../../shared/tenancy/provision.ts';
import { leaseBucketName } from '../../shared/bus/topology.ts';

import { SiteProfile } from './workload.ts';
import { measuredCopyFloor } from './copy-floor.ts';
import {
  databaseCpuBetween,
  databaseCpuSeconds,
  machineCpuSeconds,
  openBenchEnvironment,
  threadCpuSeconds,
  threadSchedStats,
  spawnRole,
  stop,
  waitReady,
} from './harness.ts';

const NATS_URL = process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222';
const PARTITIONS = 16;
/** The drain rounds' lease TTL: the workers are stopped while the backlog is published, longer than 80 % of 10 s may take. */
const DRAIN_LEASE_TTL_MS = 60_000;
const WARM_UP_EVENTS = Number(process.env.BENCH_WARM_UP_EVENTS ?? 8000);
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const say = (line: string) => process.stderr.write(`scale: ${line}\n`);

interface Row {
  round: number;
  workers: number;
  /** Beside a process that spins (the control). */
  busy: boolean;
  rate: number;
  workerUs: number;
  /** Of workerUs: the workers' JavaScript threads, and their other threads (V8's compilers and collector helpers). */
  jsUs: number;
  helperUs: number;
  databaseUs: number;
  /** Events per batch transaction. */
  perTransaction: number;
  /** The workers' garbage collection (V8's pauses on the JavaScript thread), µs per event. */
  gcUs: number;
  /** The workers' threads runnable but waiting for a core (the run queue), µs per event. */
  waitUs: number;
  /** Preemptions of the workers' JavaScript threads per 1,000 events. */
  preemptedPerK: number;
  /** Of the database backends' samples taken during the drain that were running a statement, the share waiting on a lock. */
  lockShare: number;
  /** The whole machine during the drain: busy share of all cores, and the load average (1 min) at its end. */
  machineBusy: number;
  load: number;
}

/** The sum of a Prometheus family's `_sum` lines in a /metrics text (every label set). */
const metricSum = (text: string, name: string) =>
  [...text.matchAll(new RegExp(`^${name}_sum(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))].reduce((s, m) => s + Number(m[1]), 0);
const scrapeGcSeconds = async (port: number) =>
  metricSum(await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text()), 'nodejs_gc_duration_seconds');

const median = (xs: number[]) => {
  const v = [...xs].sort((a, b) => a - b);
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};

async function emptyTables(db: Kysely<Database>): Promise<void> {
  await sql`truncate events, signals, sessions, page_scores, score_history, ux_issues, issue_updates, page_elements, outbox, partition_leases cascade`.execute(
    db,
  );
}

const owners = async (db: Kysely<Database>) =>
  (
    await sql<{
      owner: string;
      n: number;
    }>`select owner, count(*)::int as n from partition_leases group by owner`.execute(db)
  ).rows;

const writerTransactions = async (db: Kysely<Database>) =>
  (await sql<{ n: number }>`select count(distinct xmin::text)::int as n from events`.execute(db)).rows[0].n;

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 120_000, every = 50): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, every));
  }
}

export async function runBench(): Promise<void> {
  const total = Number(process.env.BENCH_EVENTS ?? 40_000);
  // `1+busy`: one worker drains beside a process that only spins (the control: a second runnable process that does
  // none of the processor's work, so what it costs the worker is the sharing of the cores alone).
  const plan = (process.env.BENCH_WORKERS ?? '1,2,4,1+busy')
    .split(',')
    .map((c) => ({ n: Number.parseInt(c, 10), busy: c.endsWith('+busy') }));
  const counts = [...new Set(plan.filter((c) => !c.busy).map((c) => c.n))];
  const ttlMs = Number(process.env.BENCH_LEASE_TTL_MS ?? 10_000);
  const bench = await openBenchEnvironment(NATS_URL);
  const { db, dbUrl, bus, prefix } = bench;
  const t = topology(prefix, PARTITIONS);
  const kvm = new Kvm(bus.nc);
  try {
    const orgId = await insertOrg(db, { name: 'bench', plan: 'enterprise' });
    // 32 sites: every one of the 16 partitions gets traffic (about two sites each).
    const sites = await Promise.all(
      Array.from({ length: 32 }, (_, s) => provisionSite(db, { orgId, name: `s${s}`, url: 'https://bench.example' })),
    );
    const profile = new SiteProfile({ seed: 3 });
    const now = Date.now();
    const messages: EventBatchMessage[] = [];
    let events = 0;
    for (let b = 0; events < total; b++) {
      const site = sites[b % sites.length].siteId;
      const sdk = profile.batch(`bench-${b % 20_000}`, Math.min(profile.sdkSize(), total - events), now);
      const evs = sdk.events.map((e) => ({
        ...e,
        id: randomUUID(),
        ...(e.type === 'signal' ? { x: 500, y: 500 } : {}),
      }));
      messages.push({
        v: 1,
        batch_id: randomUUID(),
        org_id: orgId,
        site_id: site,
        received_at: now,
        session_id: sdk.sessionId,
        context: { device: 'desktop', viewport: { w: 1280, h: 800 } },
        events: evs,
      } as unknown as EventBatchMessage);
      events += evs.length;
    }
    // Drained by every round's workers before the measured backlog: a fresh process compiles its hot paths (JIT) in
    // its first thousands of events, a cost per worker that would otherwise be charged to the measured events. The
    // first batches again, with new ids.
    const warmUp = { messages: [] as EventBatchMessage[], events: 0 };
    for (const m of messages) {
      if (warmUp.events >= Math.min(WARM_UP_EVENTS, total)) break;
      warmUp.messages.push({ ...m, batch_id: randomUUID(), events: m.events.map((e) => ({ ...e, id: randomUUID() })) });
      warmUp.events += m.events.length;
    }
    say(`COPY floor of ${events} events`);
    const floor = await measuredCopyFloor(db, dbUrl, messages, PARTITIONS);
    await emptyTables(db);

    const env = {
      DATABASE_URL: dbUrl,
      NATS_URL,
      STREAM_PREFIX: prefix,
      EVENT_PARTITIONS: String(PARTITIONS),
      PROCESSOR_PARTITIONS: 'auto',
      PROCESSOR_LEASE_TTL_MS: String(ttlMs),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
    };
    const startWorkers = async (n: number, leaseTtlMs = ttlMs) => {
      const workers: { proc: ChildProcess; port: number }[] = [];
      for (let i = 0; i < n; i++) {
        const port = await freePort();
        const proc = spawnRole(['ops/cli.ts', 'processor'], {
          ...env,
          PROCESSOR_LEASE_TTL_MS: String(leaseTtlMs),
          PORT: String(port),
        });
        proc.stdout?.pipe(process.stderr); // warnings and errors of the workers (LOG_LEVEL=warn)
        bench.children.push(proc);
        workers.push({ proc, port });
      }
      await Promise.all(workers.map((w) => waitReady(`http://127.0.0.1:${w.port}/readyz`, 120_000)));
      // A fair share each before any traffic: the drain then measures consuming, not the first rebalance.
      await until('a fair share each', async () => {
        const o = await owners(db);
        const share = Math.floor(PARTITIONS / n);
        return o.length === n && o.every((r) => r.n >= share && r.n <= share + 1) ? true : undefined;
      });
      return workers;
    };
    const resetStream = async () => {
      await bus.deleteStream(t.eventsStream);
      await kvm
        .open(leaseBucketName(t))
        .then((kv) => kv.destroy())
        .catch(() => {});
      await emptyTables(db);
    };
    const publishBacklog = async (batches = messages) => {
      for (let i = 0; i < batches.length; i += 200)
        await Promise.all(
          batches.slice(i, i + 200).map((m) => bus.publish(t.eventSubject(m.site_id), encode(m), `${m.batch_id}`)),
        );
    };
    // Drained: every partition's consumer has acknowledged everything (a message is acked after its commit). Read
    // from the stream by the bench, not by scraping the workers: a scrape costs the measured process CPU (default
    // metrics, lag reads), and N workers scraped at once would charge it N times.
    // Beside it, the database backends' wait states (a sample per poll): whether the workers' transactions wait on
    // each other's row locks.
    const waits = { active: 0, lock: 0 };
    const drained = async () => {
      const { rows: states } = await sql<{ lock: number; active: number }>`
        select count(*) filter (where wait_event_type = 'Lock')::int as lock, count(*)::int as active
          from pg_stat_activity
         where datname = current_database() and state = 'active' and pid <> pg_backend_pid()`.execute(db);
      waits.lock += states[0].lock;
      waits.active += states[0].active;
      for (let p = 0; p < PARTITIONS; p++) {
        const lag = await bus.consumerLag(t.eventsStream, t.partitionConsumer(p));
        if (!lag || lag.messages > 0) return undefined;
      }
      return true;
    };

    const rows: Row[] = [];
    // BENCH_ROUNDS > 1 runs the worker counts again in turn (1, 2, 4, 1, 2, 4, …): what else the machine runs drifts
    // over minutes, and the rounds' medians side by side see the same drift.
    const rounds = Number(process.env.BENCH_ROUNDS ?? 1);
    for (const [round, { n, busy }] of Array.from({ length: rounds }, (_, r) =>
      plan.map((c) => [r + 1, c] as const),
    ).flat()) {
      await resetStream();
      say(`${n} workers: starting, waiting for a fair share each`);
      const workers = await startWorkers(n, DRAIN_LEASE_TTL_MS);
      say(`${n} workers: warming up on ${warmUp.events} events`);
      await publishBacklog(warmUp.messages);
      await until(`${n} workers drain the warm-up`, drained, 10 * 60_000, 100);
      // The backlog is published while the workers are stopped (SIGSTOP), then they drain it: every round's
      // partitions see the same whole backlog, in fetches as large as PROCESSOR_BATCH_MESSAGES allows, and the
      // publisher does not compete with the drain for the cores.
      const gc0 = await Promise.all(workers.map((w) => scrapeGcSeconds(w.port)));
      for (const w of workers) w.proc.kill('SIGSTOP');
      const p0 = performance.now();
      await publishBacklog();
      const published = (performance.now() - p0) / 1000;
      say(`${n} workers: published in ${published.toFixed(1)} s; draining${busy ? ' beside a busy loop' : ''}`);
      const tx0 = await writerTransactions(db);
      const cpu0 = workers.map((w) => threadCpuSeconds(w.proc.pid));
      const sched0 = workers.map((w) => threadSchedStats(w.proc.pid));
      const dbCpu0 = await databaseCpuSeconds(db);
      waits.active = 0;
      waits.lock = 0;
      const machine0 = machineCpuSeconds();
      const mono0 = process.hrtime.bigint() / 1000n;
      const t0 = performance.now();
      const spinner = busy ? spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }) : undefined;
      if (spinner) bench.children.push(spinner);
      for (const w of workers) w.proc.kill('SIGCONT');
      await until(`${n} workers drain ${events} events`, drained, 10 * 60_000, 100);
      const seconds = (performance.now() - t0) / 1000;
      const cpu1 = workers.map((w) => threadCpuSeconds(w.proc.pid));
      if (spinner) await stop(spinner);
      const sched1 = workers.map((w) => threadSchedStats(w.proc.pid));
      const machine1 = machineCpuSeconds();
      const mono1 = process.hrtime.bigint() / 1000n;
      const dbCpu = databaseCpuBetween(dbCpu0, await databaseCpuSeconds(db));
      const transactions = (await writerTransactions(db)) - tx0;
      const gc1 = await Promise.all(workers.map((w) => scrapeGcSeconds(w.port)));
      // The profiles' clock is the monotonic one: this window selects the drain in a --cpu-prof profile.
      if (process.env.BENCH_PROFILE_DIR) say(`${n} workers: drain window ${mono0}-${mono1} µs (monotonic clock)`);
      const sum = (k: 'main' | 'helpers') => cpu1.reduce((s, c, i) => s + c[k] - cpu0[i][k], 0);
      const us = (cpuSeconds: number) => (cpuSeconds * 1e6) / events;
      const schedSum = (f: (s: ReturnType<typeof threadSchedStats>) => number) =>
        sched1.reduce((s, c, i) => s + f(c) - f(sched0[i]), 0);
      const machineBusy = machine1.busy - machine0.busy;
      rows.push({
        round,
        workers: n,
        busy,
        rate: events / seconds,
        workerUs: us(sum('main') + sum('helpers')),
        jsUs: us(sum('main')),
        helperUs: us(sum('helpers')),
        databaseUs: us(dbCpu),
        perTransaction: events / Math.max(1, transactions),
        gcUs: us(gc1.reduce((s, g, i) => s + g - gc0[i], 0)),
        waitUs: us(schedSum((c) => c.main.waitSeconds + c.helpers.waitSeconds)),
        preemptedPerK: (1000 * schedSum((c) => c.main.preempted)) / events,
        lockShare: waits.lock / Math.max(1, waits.active),
        machineBusy: machineBusy / (machineBusy + machine1.idle - machine0.idle),
        load: os.loadavg()[0],
      });
      say(
        `${n} workers: ${fmt(events / seconds)} events/s, ${rows.at(-1)?.workerUs.toFixed(1)} µs/event in the workers, load ${os.loadavg()[0].toFixed(1)}`,
      );
      await Promise.all(workers.map((w) => stop(w.proc)));
    }

    process.stdout.write(
      `\nscale (${events} events in ${messages.length} SDK batches, ${PARTITIONS} partitions, 32 sites; ${os.cpus().length} cores, load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')})\n`,
    );
    process.stdout.write(
      `  COPY floor: ${fmt(floor.rate)} events/s, ${floor.cpuUsPerEvent.client.toFixed(1)} + ${floor.cpuUsPerEvent.database.toFixed(1)} µs/event (client + database)\n`,
    );
    const oneIn = (round: number) =>
      rows.find((o) => o.round === round && o.workers === 1 && !o.busy)?.rate ?? Number.NaN;
    const columns: [string, (r: Row) => string][] = [
      ['round', (r) => String(r.round)],
      ['workers', (r) => `${r.workers}${r.busy ? ' + busy loop' : ''}`],
      ['events/s', (r) => fmt(r.rate)],
      ['× one', (r) => (r.rate / oneIn(r.round)).toFixed(2)],
      [
        'worker µs/event (JS + helpers)',
        (r) => `${r.workerUs.toFixed(1)} (${r.jsUs.toFixed(1)} + ${r.helperUs.toFixed(1)})`,
      ],
      ['GC pauses µs/event (wall)', (r) => r.gcUs.toFixed(1)],
      ['run-queue wait µs/event', (r) => r.waitUs.toFixed(1)],
      ['preempted /1k events', (r) => r.preemptedPerK.toFixed(1)],
      ['database µs/event', (r) => r.databaseUs.toFixed(1)],
      ['database CPU share', (r) => `${Math.round((100 * r.databaseUs) / (r.workerUs + r.databaseUs))} %`],
      ['lock waits', (r) => `${Math.round(100 * r.lockShare)} %`],
      ['events/transaction', (r) => fmt(r.perTransaction)],
      ['× floor', (r) => (r.rate / floor.rate).toFixed(2)],
      ['machine busy', (r) => `${Math.round(100 * r.machineBusy)} %`],
      ['load (1 min)', (r) => r.load.toFixed(1)],
    ];
    const widths = columns.map(([h, f]) => Math.max(h.length, ...rows.map((r) => f(r).length)));
    const line = (cells: string[]) => `  ${cells.map((c, i) => c.padStart(widths[i])).join('  ')}\n`;
    process.stdout.write(line(columns.map(([h]) => h)));
    for (const r of rows) process.stdout.write(line(columns.map(([, f]) => f(r))));
    // On cores of their own, N CPU-bound workers drain N / (CPU per event with N) against one worker's 1 / (CPU per
    // event with one): the projection the target allows when two shared cores cannot show the rate.
    const byCount = (n: number, f: (r: Row) => number) => median(rows.filter((r) => r.workers === n && !r.busy).map(f));
    const oneUs = byCount(1, (r) => r.workerUs);
    for (const n of counts.filter((c) => c > 1)) {
      const nUs = byCount(n, (r) => r.workerUs);
      process.stdout.write(
        `  projected on dedicated cores, ${n} workers against one: ${n} × ${oneUs.toFixed(1)} / ${nUs.toFixed(1)} µs/event = ${((n * oneUs) / nUs).toFixed(2)} × (median of ${rounds} round${rounds > 1 ? 's' : ''}; measured here ${byCount(n, (r) => r.rate / oneIn(r.round)).toFixed(2)} ×)\n`,
      );
    }
    const two = byCount(2, (r) => r.workerUs);
    process.stdout.write(
      `  target: 2 workers ≥ 1.6 × one when the database is not the bottleneck; here the database took ${Math.round(100 * byCount(1, (r) => r.databaseUs / (r.workerUs + r.databaseUs)))} % of one worker's drain, so by CPU per event: projected ${((2 * oneUs) / two).toFixed(2)} × (${(2 * oneUs) / two >= 1.6 ? 'met' : 'NOT met'})\n`,
    );
    // Takeover: two workers, one SIGKILLed; the survivor must hold all 16 within 2 × TTL + its rebuild.
    if (process.env.BENCH_TAKEOVER === '0') return;
    await resetStream();
    say('takeover: two workers, then one SIGKILLed');
    const pair = await startWorkers(2);
    await publishBacklog();
    const [victim, survivor] = pair;
    const killedAt = performance.now();
    victim.proc.kill('SIGKILL');
    bench.children.splice(bench.children.indexOf(victim.proc), 1); // gone: nothing to stop at the end
    const tookOver = await until(
      'the survivor holds every partition',
      async () => {
        const o = await owners(db);
        return o.length === 1 && o[0].n === PARTITIONS && o[0].owner.includes(`-${survivor.proc.pid}-`)
          ? true
          : undefined;
      },
      6 * ttlMs + 60_000,
    ).catch(() => false);
    const takeoverMs = performance.now() - killedAt;
    const metrics = await fetch(`http://127.0.0.1:${survivor.port}/metrics`)
      .then((r) => r.text())
      .catch(() => '');
    const rebuildSum = Number(/^friction_processor_partition_rebuild_seconds_sum (\S+)/m.exec(metrics)?.[1] ?? 0);
    const rebuildCount = Number(/^friction_processor_partition_rebuild_seconds_count (\S+)/m.exec(metrics)?.[1] ?? 1);
    const rebuildMs = (rebuildSum / Math.max(1, rebuildCount)) * 1000 * (PARTITIONS / 2);
    await stop(survivor.proc);

    process.stdout.write(
      `  takeover after SIGKILL of one of two workers: ${tookOver ? '' : 'NOT complete after '}${fmt(takeoverMs)} ms (bound 2 × TTL ${ttlMs} ms + rebuild ${fmt(rebuildMs)} ms = ${fmt(2 * ttlMs + rebuildMs)} ms: ${takeoverMs <= 2 * ttlMs + rebuildMs ? 'met' : 'NOT met'})\n`,
    );
  } finally {
    await kvm
      .open(leaseBucketName(t))
      .then((kv) => kv.destroy())
      .catch(() => {});
    await bench.close();
  }
}
