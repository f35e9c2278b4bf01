/**
 * `npm run bench -- engine`: the friction engine under load.
 *  1. Fold cost per event as the number of pages grows (engine fold + commit of windows and clusters) beside a
 *     raw baseline (a bare Map counter over the same events), and the slope per tenfold pages.
 *  2. Memory (RSS, live heap) of the in-memory state at 10k pages, 100k pages, and 100k pages × 10 = 1M clusters,
 *     each built in its own process.
 *  3. The processor draining a signal-heavy backlog from JetStream into PostgreSQL (events, signals, sessions,
 *     scores, issues, elements), beside a bare multi-row insert of the same rows.
 *  4. Score-update lag (event ingested → its page's score row exists) at a steady 5k events/s through ingest.
 * Environment: BENCH_EVENTS (100000 for 3), BENCH_LAG_RATE (5000), BENCH_LAG_SECONDS (20).
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { applyEvents, createWindowState } from '../../processor/engine/windows.ts';
import { applySignals, createClusterState } from '../../processor/engine/cluster-state.ts';
import type { EngineEvent } from '../../processor/engine/events.ts';
import { insertOrg, provisionSite } from '../../shared/tenancy/provision.ts';
import { topology } from '../../shared/contracts/subjects.ts';
import { encode } from '../../shared/contracts/codec.ts';
import { ensureStreams } from '../../shared/bus/topology.ts';
import { freePort } from '../../shared/testing/nats-server.ts';
import { openBenchEnvironment, spawnRole, waitReady } from './harness.ts';
import { Progress } from './progress.ts';
import { percentile } from './load.ts';
import { measureDrain } from './drain.ts';
import { measureScoreLag } from './score-lag.ts';

const NATS_URL = process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222';
const SIGNALS = ['rage_click', 'dead_click', 'disabled_element_attempt', 'error_encounter', 'form_abandon'];
const SITE = '00000000-0000-4000-8000-000000000001';
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;

/** Signal-heavy traffic over `pages` pages: each event a signal on one of 4 elements, 1 in 5 a page view. */
function traffic(n: number, pages: number, now: number): EngineEvent[] {
  return Array.from({ length: n }, (_, i) => {
    const page = `/p/${(i * 7919) % pages}`;
    const base = { id: `e${i}`, siteId: SITE, sessionId: `s${i % 20_000}`, ts: now - (i % 3600) * 1000, page };
    return i % 5 === 0
      ? { ...base, type: 'page_view' as const }
      : { ...base, type: 'signal' as const, signal: SIGNALS[i % SIGNALS.length], selector: `#el-${i % 4}`, label: 'Button' };
  });
}

function foldCost(pages: number): { engineNs: number; rawNs: number } {
  const now = Date.now();
  // Warm the state with every page first, so the measured fold runs against a state of this size.
  const windows = createWindowState();
  const clusters = createClusterState();
  const warm = traffic(pages * 2, pages, now);
  applyEvents(windows, warm);
  applySignals(clusters, warm);
  const events = traffic(200_000, pages, now).map((e) => ({ ...e, id: `m${e.id}` }));
  let t = performance.now();
  for (let i = 0; i < events.length; i += 1000) {
    const batch = events.slice(i, i + 1000);
    applyEvents(windows, batch);
    applySignals(clusters, batch);
  }
  const engineNs = ((performance.now() - t) * 1e6) / events.length;
  const raw = new Map<string, number>();
  t = performance.now();
  for (const e of events) {
    const k = `${e.siteId}\u0000${e.page}\u0000${e.selector ?? ''}\u0000${e.signal ?? e.type}`;
    raw.set(k, (raw.get(k) ?? 0) + 1);
  }
  const rawNs = ((performance.now() - t) * 1e6) / events.length;
  return { engineNs, rawNs };
}

/** Builds the state in a fresh process; `heapCapMb` runs it as a processor started with --max-old-space-size. */
function memory(pages: number, clustersPerPage: number, heapCapMb = 4096): { rss: number; heapUsed: number; ms: number } {
  const out = execFileSync(process.execPath, ['--expose-gc', `--max-old-space-size=${heapCapMb}`, 'ops/bench/engine-memory.ts', String(pages), String(clustersPerPage)], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').at(-1)!);
}

export async function runBench(_args: string[]): Promise<void> {
  const rows: string[][] = [['measure', 'friction', 'raw baseline', 'ratio', 'target']];

  // 1. Cost per event as pages grow.
  const sizes = [1_000, 10_000, 100_000];
  const fold = new Progress('fold cost vs pages', sizes.length);
  const costs = sizes.map((p, i) => {
    const c = foldCost(p);
    fold.update(i + 1);
    return c;
  });
  fold.done();
  costs.forEach((c, i) => rows.push([`fold ns/event @${fmt(sizes[i])} pages`, c.engineNs.toFixed(0), c.rawNs.toFixed(0), (c.engineNs / c.rawNs).toFixed(1), '']));
  const slope = (costs[2].engineNs - costs[0].engineNs) / 2;
  rows.push(['fold cost slope ns/event per 10× pages', slope.toFixed(0), '', '', 'flat (≈ 0)']);

  // 2. Memory.
  const mem = new Progress('engine memory', 4);
  const m10k = memory(10_000, 4);
  mem.update(1);
  const m100k = memory(100_000, 4);
  mem.update(2);
  const m1m = memory(100_000, 10);
  mem.update(3);
  // V8 grows its heap well past the live set when allowed to; a processor sized for its state caps it.
  const m1mCapped = memory(100_000, 10, 1000);
  mem.done();
  rows.push(['RSS @10k pages (40k clusters)', mib(m10k.rss), '', '', `heap ${mib(m10k.heapUsed)}`]);
  rows.push(['RSS @100k pages (400k clusters)', mib(m100k.rss), '', '', `heap ${mib(m100k.heapUsed)}`]);
  rows.push(['RSS @100k pages + 1M clusters', mib(m1m.rss), '', '', `≤ 1024 MiB (live heap ${mib(m1m.heapUsed)})`]);
  rows.push(['  same, heap capped at 1000 MB', mib(m1mCapped.rss), '', '', `≤ 1024 MiB (build ${(m1mCapped.ms / m1m.ms).toFixed(1)}× slower)`]);

  // 3 and 4 need the services.
  const bench = await openBenchEnvironment(NATS_URL);
  const { db, dbUrl, bus, prefix, children } = bench;
  const topo = topology(prefix, 4);
  try {
    const orgId = await insertOrg(db, { name: 'bench', plan: 'enterprise' });
    const sites = await Promise.all(Array.from({ length: 8 }, (_, s) => provisionSite(db, { orgId, name: `s${s}`, url: 'https://bench.example' })));
    await ensureStreams(bus, topo);
    const total = Number(process.env.BENCH_EVENTS ?? 100_000);
    const perBatch = 20;
    const pub = new Progress('publish backlog', total / perBatch);
    const now = Date.now();
    const batchRows: { site: string; session: string; e: Record<string, unknown> }[] = [];
    for (let b = 0; b < total / perBatch; b++) {
      const site = sites[b % sites.length].siteId;
      const session = `bench-${b % 4000}`;
      const events = Array.from({ length: perBatch }, (_, j) => {
        const i = b * perBatch + j;
        const e = { id: randomUUID(), ts: now - (perBatch - j) * 100, page: `/p/${b % 200}`, type: j === 0 ? 'page_view' : 'signal', ...(j === 0 ? {} : { signal: SIGNALS[i % SIGNALS.length], selector: `#el-${i % 6}`, label: 'Button', x: 500, y: 500 }) };
        batchRows.push({ site, session, e });
        return e;
      });
      const msg = { v: 1, batch_id: randomUUID(), org_id: orgId, site_id: site, received_at: now, session_id: session, context: { device: 'desktop', viewport: { w: 1280, h: 800 } }, events };
      await bus.publish(topo.eventSubject(site), encode(msg), msg.batch_id);
      if (b % 200 === 0) pub.update(b);
    }
    pub.done();

    // Raw baseline: the same rows, bare multi-row insert.
    await sql`create table events_raw (like events including all)`.execute(db);
    const t0 = performance.now();
    for (let i = 0; i < batchRows.length; i += 20_000) {
      const chunk = batchRows.slice(i, i + 20_000);
      const col = (f: (r: (typeof batchRows)[number]) => unknown) => chunk.map(f);
      await sql`insert into events_raw (site_id, id, ts, received_at, session_id, type, page, signal, selector, label, x, y, device)
        select * from unnest(${col((r) => r.site)}::uuid[], ${col((r) => r.e.id)}::uuid[], ${col((r) => new Date(r.e.ts as number).toISOString())}::timestamptz[],
          ${col((r) => new Date(r.e.ts as number).toISOString())}::timestamptz[], ${col((r) => r.session)}::text[], ${col((r) => r.e.type)}::text[],
          ${col((r) => r.e.page)}::text[], ${col((r) => r.e.signal ?? null)}::text[], ${col((r) => r.e.selector ?? null)}::text[],
          ${col((r) => r.e.label ?? null)}::text[], ${col((r) => r.e.x ?? null)}::smallint[], ${col((r) => r.e.y ?? null)}::smallint[], ${col(() => 'desktop')}::text[])`.execute(db);
    }
    const rawInsertRate = batchRows.length / ((performance.now() - t0) / 1000);
    await sql`drop table events_raw`.execute(db);

    const env = { DATABASE_URL: dbUrl, NATS_URL, REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379', STREAM_PREFIX: prefix, LOG_LEVEL: 'warn', HOST: '127.0.0.1', INGEST_RATE_LIMIT_PER_MIN: '100000000' };
    const processorPort = await freePort();
    const processor = spawnRole(['ops/cli.ts', 'processor'], { ...env, PORT: String(processorPort) });
    children.push(processor);
    const drainRate = await measureDrain(processorPort, total);
    const issues = Number((await sql<{ n: number }>`select count(*)::int as n from ux_issues`.execute(db)).rows[0].n);
    rows.push(['processor events/s, signal-heavy (80% signals)', fmt(drainRate), fmt(rawInsertRate), (drainRate / rawInsertRate).toFixed(2), `${issues} issues opened`]);

    const ingestPort = await freePort();
    const ingest = spawnRole(['ops/cli.ts', 'ingest'], { ...env, PORT: String(ingestPort) });
    children.push(ingest);
    await waitReady(`http://127.0.0.1:${ingestPort}/readyz`);
    const rate = Number(process.env.BENCH_LAG_RATE ?? 5000);
    const lags = await measureScoreLag({
      db, ingestUrl: `http://127.0.0.1:${ingestPort}/v1/ingest`, keys: sites.map((s) => s.publishableKey), probeSite: sites[0].siteId,
      rate, seconds: Number(process.env.BENCH_LAG_SECONDS ?? 20), signalHeavy: true,
    });
    rows.push([`score lag p50 / p99 ms @${fmt(rate)} events/s`, `${percentile(lags, 50).toFixed(0)} / ${percentile(lags, 99).toFixed(0)}`, '', '', `p99 ≤ 2000 (${lags.length} probes)`]);
  } finally {
    await bench.close();
  }

  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  process.stdout.write(`\nengine benchmark (${(await import('node:os')).cpus().length} cores; raw baselines: a bare Map counter fold, a bare multi-row insert)\n`);
  for (const r of rows) process.stdout.write(`  ${r.map((cell, c) => cell.padEnd(widths[c])).join('  ')}\n`);
}
