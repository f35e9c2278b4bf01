/**
 * `npm run bench -- query [--events 1000000,10000000] [--seconds 6] [--clients 8]`: every read route and six Explorer
 * queries against an API role process on the PostgreSQL server, over data written by `friction demo --events` (30
 * days, a session per ten events, 2,000 pages). For each size: p50/p95/p99 of each route under `--clients`
 * concurrent clients (closed loop, keep-alive), beside the floor measured in the same run (GET /v1/query/heuristics:
 * the HTTP stack, the key lookup through the same pool, no query of its own). Then how each p95 grows from the first
 * size to the last, and the targets. BENCH_DATABASE_URL names the server (default the local one).
 * `--reuse <database> --key <svc_sec_…>` measures a database `friction demo --events` already filled (its site with
 * the most sessions, read with that site's secret key) instead of generating one; `--skip name,name` leaves out the
 * routes whose name contains one of them.
 */
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import { databaseCpuBetween, databaseCpuSeconds, processCpuSeconds, stop } from './harness.ts';
import { percentile } from './open-loop.ts';
import { arg, readBenchDatabase, startBenchApi } from './read-fixture.ts';

interface RouteResult {
  name: string;
  n: number;
  errors: number;
  p50: number;
  p95: number;
  p99: number;
  statuses: string;
  /** CPU per request (the warm-up's included) of the API process and of the database's backends, in ms. */
  apiCpuMs: number;
  dbCpuMs: number;
}

/** `clients` closed-loop clients on keep-alive connections for `seconds` (and at least 2 requests each). */
async function measure(
  url: string,
  headers: Record<string, string>,
  clients: number,
  seconds: number,
): Promise<Omit<RouteResult, 'name' | 'apiCpuMs' | 'dbCpuMs'>> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  const once = () =>
    new Promise<void>((resolve) => {
      const t0 = performance.now();
      const req = http.get(url, { agent, headers }, (res) => {
        res.resume();
        res.on('end', () => {
          latencies.push(performance.now() - t0);
          statuses.set(res.statusCode ?? 0, (statuses.get(res.statusCode ?? 0) ?? 0) + 1);
          resolve();
        });
      });
      req.on('error', () => (statuses.set(0, (statuses.get(0) ?? 0) + 1), resolve()));
    });
  await once(); // warm: connection, plan cache, pages in shared buffers
  latencies.length = 0;
  statuses.clear();
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let k = 0; k < 2 || performance.now() < deadline; k++) await once();
    }),
  );
  agent.destroy();
  const errors = [...statuses].filter(([s]) => s !== 200).reduce((a, [, n]) => a + n, 0);
  return {
    n: latencies.length,
    errors,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    p99: percentile(latencies, 99),
    statuses: [...statuses].map(([s, n]) => `${s}×${n}`).join(' '),
  };
}

const ms = (v: number) => (v >= 100 ? v.toFixed(0) : v.toFixed(1)).padStart(7);

export async function runBench(args: string[]): Promise<void> {
  const sizes = arg(args, 'events', '1000000,10000000').split(',').map(Number);
  const seconds = Number(arg(args, 'seconds', '6'));
  const clients = Number(arg(args, 'clients', '8'));
  const all = new Map<number, RouteResult[]>();
  const reuse = args.includes('--reuse') ? arg(args, 'reuse', '') : undefined;
  const skip = arg(args, 'skip', '').split(',').filter(Boolean);
  for (const events of reuse ? [0] : sizes) {
    const fixture = await readBenchDatabase(
      'query',
      events,
      reuse === undefined ? undefined : { database: reuse, key: arg(args, 'key', '') },
    );
    const { handle, site } = fixture;
    let api: ChildProcess | undefined;
    try {
      const shown = fixture.events;
      const top = await handle.db
        .selectFrom('page_elements')
        .select(['page', 'selector'])
        .where('site_id', '=', site.siteId)
        .orderBy('friction_score', 'desc')
        .limit(1)
        .executeTakeFirstOrThrow();
      const started = await startBenchApi(fixture.url, {
        EXPLORE_STATEMENT_TIMEOUT_MS: '60000',
        DATABASE_STATEMENT_TIMEOUT_MS: '120000',
      });
      api = started.api;
      const base = started.base;
      const s = `site_id=${site.siteId}`;
      const q = (query: unknown) => `/v1/query/explore?${s}&q=${encodeURIComponent(JSON.stringify(query))}`;
      const routes: [string, string][] = [
        ['floor (heuristics)', `/v1/query/heuristics?${s}`],
        ['scores', `/v1/query/scores?${s}`],
        ['issues', `/v1/query/issues?${s}`],
        ['page', `/v1/query/page?${s}&page=${encodeURIComponent(top.page)}`],
        ['elements', `/v1/query/elements?${s}`],
        [
          'element-heatmap',
          `/v1/query/element-heatmap?${s}&page=${encodeURIComponent(top.page)}&selector=${encodeURIComponent(top.selector)}`,
        ],
        ['page-heatmap', `/v1/query/page-heatmap?${s}&page=${encodeURIComponent(top.page)}`],
        ['deploys', `/v1/query/deploys?${s}`],
        ['trends 30d', `/v1/query/trends?${s}&days=30`],
        ['flows', `/v1/query/flows?${s}`],
        ['journeys limit=1000', `/v1/query/journeys/friction?${s}&limit=1000`],
        ['insights 30d', `/v1/query/insights?${s}&days=30`],
        ['revenue', `/v1/query/revenue?${s}`],
        ['recommendations', `/v1/query/recommendations?${s}`],
        [
          'explore list 3 filters',
          q({
            window_days: 30,
            filters: [
              { field: 'source', op: 'is', value: 'google' },
              { field: 'confused', op: 'is', value: true },
              { field: 'page', op: 'is', value: '/checkout' },
            ],
            output: { mode: 'list', limit: 100 },
          }),
        ],
        [
          'explore count by day 30d',
          q({ window_days: 30, output: { mode: 'measure', metric: 'count', group_by: 'day' } }),
        ],
        [
          'explore dwell by page 30d',
          q({ window_days: 30, output: { mode: 'measure', metric: 'avg_dwell_ms', group_by: 'page' } }),
        ],
        [
          'explore conv. by cohort 30d',
          q({ window_days: 30, output: { mode: 'measure', metric: 'conversion_rate', group_by: 'cohort' } }),
        ],
        [
          'explore event type 30d',
          q({
            window_days: 30,
            filters: [{ field: 'event_type', op: 'is', value: 'conversion' }],
            output: { mode: 'measure', metric: 'count' },
          }),
        ],
        [
          'explore page contains 30d',
          q({
            window_days: 30,
            filters: [{ field: 'page', op: 'contains', value: '/products/' }],
            output: { mode: 'measure', metric: 'count' },
          }),
        ],
      ];
      const headers = { authorization: `Bearer ${site.secretKey}` };
      const results: RouteResult[] = [];
      process.stdout.write(
        `\n${shown.toLocaleString('en-US')} events, ${clients} clients, ${seconds} s per route (ms)\n${'route'.padEnd(30)}      n     p50     p95     p99  p95/floor  CPU/req: API     DB  statuses\n`,
      );
      let floor = Number.NaN;
      for (const [name, path] of routes.filter(([n]) => n.startsWith('floor') || !skip.some((k) => n.includes(k)))) {
        // Where a request's time goes: the API process's CPU and the database backends' CPU per request. On two cores
        // with 8 clients, a p95 far above their sum is waiting for a core or for the API's one JavaScript thread.
        const api0 = processCpuSeconds(api.pid);
        const db0 = await databaseCpuSeconds(handle.db);
        const m = await measure(`${base}${path}`, headers, clients, seconds);
        const db1 = await databaseCpuSeconds(handle.db);
        const perRequest = (cpuSeconds: number) => (cpuSeconds * 1000) / (m.n + 1);
        const r: RouteResult = {
          name,
          ...m,
          apiCpuMs: perRequest(processCpuSeconds(api.pid) - api0),
          dbCpuMs: perRequest(databaseCpuBetween(db0, db1)),
        };
        if (Number.isNaN(floor)) floor = r.p95;
        results.push(r);
        process.stdout.write(
          `${name.padEnd(30)} ${String(r.n).padStart(6)} ${ms(r.p50)} ${ms(r.p95)} ${ms(r.p99)} ${(r.p95 / floor).toFixed(1).padStart(9)}×  ${ms(r.apiCpuMs)}${ms(r.dbCpuMs)}  ${r.statuses}\n`,
        );
      }
      all.set(events, results);
    } finally {
      await stop(api);
      await fixture.close(args.includes('--keep'));
    }
  }
  if (sizes.length > 1 && !reuse) {
    const [first, last] = [all.get(sizes[0])!, all.get(sizes[sizes.length - 1])!];
    process.stdout.write(
      `\ngrowth of p95 from ${sizes[0].toLocaleString('en-US')} to ${sizes[sizes.length - 1].toLocaleString('en-US')} events\n`,
    );
    for (let i = 0; i < first.length; i++)
      process.stdout.write(
        `${first[i].name.padEnd(30)} ${ms(first[i].p95)} → ${ms(last[i].p95)}  ${(last[i].p95 / first[i].p95).toFixed(2)}×\n`,
      );
  }
  const last = [...all.values()].pop()!;
  process.stdout.write(`\ntargets (p95 of the last size)\n`);
  const targets: [string, number][] = [
    ...['scores', 'issues', 'page', 'elements', 'element-heatmap', 'page-heatmap', 'deploys'].map(
      (n) => [n, 20] as [string, number],
    ),
    ['explore count by day 30d', 300],
    ['explore list 3 filters', 150],
    ['journeys limit=1000', 300],
  ];
  for (const [name, target] of targets) {
    const r = last.find((x) => x.name === name);
    if (r)
      process.stdout.write(
        `  ${name.padEnd(28)} ≤ ${target} ms: ${ms(r.p95)}  ${r.p95 <= target ? 'met' : 'NOT met'}\n`,
      );
  }
}
