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
 * Environment: BENCH_EVENTS (40000), BENCH_WORKERS (1,2,4), BENCH_LEASE_TTL_MS (10000, the default lease TTL).
 */
import { freePort } from '../../shared/testing/processes.ts';
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
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
  openBenchEnvironment,
  threadCpuSeconds,
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
  workers: number;
  rate: number;
  workerUs: number;
  /** Of workerUs: the workers' JavaScript threads, and their other threads (V8's compilers and collector helpers). */
  jsUs: number;
  helperUs: number;
  databaseUs: number;
  /** Events per batch transaction. */
  perTransaction: number;
}

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
  const counts = (process.env.BENCH_WORKERS ?? '1,2,4').split(',').map(Number);
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
    const drained = async () => {
      for (let p = 0; p < PARTITIONS; p++) {
        const lag = await bus.consumerLag(t.eventsStream, t.partitionConsumer(p));
        if (!lag || lag.messages > 0) return undefined;
      }
      return true;
    };

    const rows: Row[] = [];
    for (const n of counts) {
      await resetStream();
      say(`${n} workers: starting, waiting for a fair share each`);
      const workers = await startWorkers(n, DRAIN_LEASE_TTL_MS);
      say(`${n} workers: warming up on ${warmUp.events} events`);
      await publishBacklog(warmUp.messages);
      await until(`${n} workers drain the warm-up`, drained, 10 * 60_000, 100);
      // The backlog is published while the workers are stopped (SIGSTOP), then they drain it: every round's
      // partitions see the same whole backlog, in fetches as large as PROCESSOR_BATCH_MESSAGES allows, and the
      // publisher does not compete with the drain for the cores.
      for (const w of workers) w.proc.kill('SIGSTOP');
      const p0 = performance.now();
      await publishBacklog();
      const published = (performance.now() - p0) / 1000;
      say(`${n} workers: published in ${published.toFixed(1)} s; draining`);
      const tx0 = await writerTransactions(db);
      const cpu0 = workers.map((w) => threadCpuSeconds(w.proc.pid));
      const dbCpu0 = await databaseCpuSeconds(db);
      const mono0 = process.hrtime.bigint() / 1000n;
      const t0 = performance.now();
      for (const w of workers) w.proc.kill('SIGCONT');
      await until(`${n} workers drain ${events} events`, drained, 10 * 60_000, 100);
      const seconds = (performance.now() - t0) / 1000;
      const cpu1 = workers.map((w) => threadCpuSeconds(w.proc.pid));
      const mono1 = process.hrtime.bigint() / 1000n;
      const dbCpu = databaseCpuBetween(dbCpu0, await databaseCpuSeconds(db));
      const transactions = (await writerTransactions(db)) - tx0;
      // The profiles' clock is the monotonic one: this window selects the drain in a --cpu-prof profile.
      if (process.env.BENCH_PROFILE_DIR) say(`${n} workers: drain window ${mono0}-${mono1} µs (monotonic clock)`);
      const sum = (k: 'main' | 'helpers') => cpu1.reduce((s, c, i) => s + c[k] - cpu0[i][k], 0);
      const us = (cpuSeconds: number) => (cpuSeconds * 1e6) / events;
      rows.push({
        workers: n,
        rate: events / seconds,
        workerUs: us(sum('main') + sum('helpers')),
        jsUs: us(sum('main')),
        helperUs: us(sum('helpers')),
        databaseUs: us(dbCpu),
        perTransaction: events / Math.max(1, transactions),
      });
      await Promise.all(workers.map((w) => stop(w.proc)));
    }

    const one = rows.find((r) => r.workers === 1)?.rate ?? rows[0].rate;
    process.stdout.write(
      `\nscale (${events} events in ${messages.length} SDK batches, ${PARTITIONS} partitions, 32 sites; ${os.cpus().length} cores, load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')})\n`,
    );
    process.stdout.write(
      `  COPY floor: ${fmt(floor.rate)} events/s, ${floor.cpuUsPerEvent.client.toFixed(1)} + ${floor.cpuUsPerEvent.database.toFixed(1)} µs/event (client + database)\n`,
    );
    process.stdout.write(
      '  workers  events/s  × one  worker µs/event (JS thread + helpers)  database µs/event  database CPU share  events/transaction  × floor\n',
    );
    for (const r of rows)
      process.stdout.write(
        `  ${String(r.workers).padStart(7)}  ${fmt(r.rate).padStart(8)}  ${(r.rate / one).toFixed(2).padStart(5)}  ${`${r.workerUs.toFixed(1)} (${r.jsUs.toFixed(1)} + ${r.helperUs.toFixed(1)})`.padStart(37)}  ${r.databaseUs.toFixed(1).padStart(17)}  ${`${Math.round((100 * r.databaseUs) / (r.workerUs + r.databaseUs))} %`.padStart(18)}  ${fmt(r.perTransaction).padStart(18)}  ${(r.rate / floor.rate).toFixed(2).padStart(7)}\n`,
      );
    // Takeover: two workers, one SIGKILLed; the survivor must hold all 16 within 2 × TTL + its rebuild.
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
    process.stdout.write(
      '  target: 2 workers ≥ 1.6 × one worker when the database is not the bottleneck (else compare worker µs/event)\n',
    );
  } finally {
    await kvm
      .open(leaseBucketName(t))
      .then((kv) => kv.destroy())
      .catch(() => {});
    await bench.close();
  }
}
