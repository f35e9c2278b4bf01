/**
 * `npm run bench -- mcp`: the site context route and every MCP tool over Streamable HTTP (`POST /v1/mcp`, one
 * stateless JSON-RPC `tools/call` per request, as an MCP client sends it after its handshake), each beside the REST
 * route it wraps, under open-loop load from concurrent clients on the demo data (ops/demo.ts journeys through ingest
 * and the processor, plus two deploys and an alert). p50/p95/p99 per row, the achieved rate, and the MCP/REST ratio
 * of p95 and of p50: the REST route is the floor for the same work in the same run.
 * Real PostgreSQL and NATS (BENCH_DATABASE_URL, NATS_URL); every role in this process.
 *   BENCH_MCP_SESSIONS  demo sessions to seed (default 400)
 *   BENCH_MCP_RATE      requests per second per row (default 20)
 *   BENCH_MCP_SEQUENTIAL  requests one at a time per row and side for the service-time table (default 30)
 *   BENCH_MCP_SECONDS   seconds per row (default 4)
 */
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { closeInfra, openInfra } from '../../shared/infra.ts';
import { createLogger } from '../../shared/logger.ts';
import { insertOrg, issueApiKey, provisionSite } from '../../shared/tenancy/provision.ts';
import { ingestRole } from '../../ingest/main.ts';
import { apiRole } from '../../api/main.ts';
import { processorRole } from '../../processor/main.ts';
import { closeServer, serveRoles } from '../server.ts';
import { seedMcpSite } from '../testing/mcp-seed.ts';
import { openBenchEnvironment } from './harness.ts';
import { openLoad, percentile, type OpenLoadResult } from './load.ts';
import { targetLine } from './open-loop.ts';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const SESSIONS = Number(process.env.BENCH_MCP_SESSIONS ?? 400);
const SEQUENTIAL = Number(process.env.BENCH_MCP_SEQUENTIAL ?? 30);
/** Each row's open loop, the REST side's and the MCP side's alike (requests per second, seconds, in flight at most). */
const LOAD = {
  eventsPerSecond: Number(process.env.BENCH_MCP_RATE ?? 20),
  seconds: Number(process.env.BENCH_MCP_SECONDS ?? 4),
  maxInFlight: 32,
};
/** The issue's targets: MCP's p95, and MCP's p95 over REST's. */
const TARGET = { p95Ms: 50, ratio: 1.3 };

interface Row {
  name: string;
  rest: string;
  tool: string;
  args: Record<string, unknown>;
  /** The issue's p95 target applies (context, issue, page and deploy rows). */
  targeted: boolean;
}

const fmt = (ms: number) => ms.toFixed(1).padStart(7);

function line(label: string, r: OpenLoadResult): { p50: number; p95: number; p99: number } {
  const p = {
    p50: percentile(r.latenciesMs, 50),
    p95: percentile(r.latenciesMs, 95),
    p99: percentile(r.latenciesMs, 99),
  };
  const rate = r.acceptedBatches / r.seconds;
  process.stdout.write(
    `  ${label.padEnd(44)} p50 ${fmt(p.p50)}  p95 ${fmt(p.p95)}  p99 ${fmt(p.p99)} ms   ${rate.toFixed(1)}/s of ${LOAD.eventsPerSecond}/s offered` +
      `${r.failedBatches ? `, ${r.failedBatches} failed` : ''}${r.droppedBatches ? `, ${r.droppedBatches} not sent (${LOAD.maxInFlight} in flight)` : ''}\n`,
  );
  return p;
}

export async function runBench(): Promise<void> {
  const bench = await openBenchEnvironment(NATS_URL);
  const config = bench.config({ READ_RATE_LIMIT_PER_MIN: '100000000', GUIDE_RATE_LIMIT_PER_MIN: '100000000' });
  const log = createLogger('warn');
  const infra = await openInfra(config, log);
  const db = infra.database.db;
  const api = apiRole(infra);
  const processor = await processorRole(infra).start();
  const server = await serveRoles('bench', [ingestRole(infra), api, processor.http], log, 0, '127.0.0.1');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const orgId = await insertOrg(db, { name: 'bench', plan: 'pro', sessionLimit: null });
    const site = await provisionSite(db, { orgId, name: 'bench', url: 'https://bench.example' });
    const mcpKey = (await issueApiKey(db, { orgId, siteId: site.siteId, type: 'mcp', scopes: ['mcp:read'] })).key;
    process.stdout.write(`mcp bench: seeding ${SESSIONS} demo sessions through ingest and the processor…\n`);
    const seeded = await seedMcpSite({
      baseUrl: base,
      db,
      siteId: site.siteId,
      publishableKey: site.publishableKey,
      sessions: SESSIONS,
      tick: async () => processor.running.tick?.(),
    });
    const events = (
      await sql<{ n: number }>`select count(*)::int as n from events where site_id = ${site.siteId}`.execute(db)
    ).rows[0].n;
    const q = `site_id=${site.siteId}`;
    const ctx = (await fetch(`${base}/v1/query/mcp/context?${q}`, {
      headers: { authorization: `Bearer ${mcpKey}` },
    }).then((r) => r.json())) as { data: unknown };
    process.stdout.write(
      `data: ${events} events, ${SESSIONS} sessions, 2 deploys (NOT the issue's 10M events: run on a generated 10M-event site for that figure); ` +
        `context data ${Buffer.byteLength(JSON.stringify(ctx.data))} bytes (budget 8192)\n`,
    );
    process.stdout.write(
      `load: open loop, ${LOAD.eventsPerSecond} requests/s per row for ${LOAD.seconds} s, up to ${LOAD.maxInFlight} in flight (concurrent clients), keep-alive; REST then MCP per row\n\n`,
    );

    // Each row: what it is, the REST path, the MCP tool and its arguments, and whether the p95 target applies.
    const row = (name: string, rest: string, tool: string, args: Record<string, unknown>, targeted: boolean): Row => ({
      name,
      rest,
      tool,
      args,
      targeted,
    });
    const rows: Row[] = [
      row('site context', `/v1/query/mcp/context?${q}`, 'get_site_context', {}, true),
      row('list issues', `/v1/query/issues?${q}&limit=20`, 'list_issues', { limit: 20 }, false),
      row('get issue', `/v1/query/issues/${seeded.issueId}?${q}`, 'get_issue', { issue_id: seeded.issueId }, true),
      row(
        'get page (tool adds the heatmap sample)',
        `/v1/query/page?${q}&page=${encodeURIComponent(seeded.page)}`,
        'get_page',
        { page: seeded.page },
        true,
      ),
      row('list deploys', `/v1/query/deploys?${q}&limit=10`, 'list_deploys', { limit: 10 }, true),
      row(
        'check deploy',
        `/v1/query/deploys/${seeded.fail.id}?${q}`,
        'check_deploy',
        { deploy: seeded.fail.version },
        true,
      ),
      row('friction journeys', `/v1/query/journeys/friction?${q}`, 'friction_journeys', { limit: 10 }, false),
    ];
    const auth = { authorization: `Bearer ${mcpKey}` };
    const mcpHeaders = {
      ...auth,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    };
    const results: { row: Row; rest: ReturnType<typeof line>; mcp: ReturnType<typeof line> }[] = [];
    // Service time first: one request at a time (no queueing), the median of SEQUENTIAL each, REST and MCP interleaved.
    const once = async (url: string, init: RequestInit) => {
      const t0 = performance.now();
      const r = await fetch(url, init);
      await r.arrayBuffer();
      if (r.status !== 200) throw new Error(`${url}: ${r.status}`);
      return performance.now() - t0;
    };
    process.stdout.write(`service time, one request at a time (median of ${SEQUENTIAL}):\n`);
    for (const row of rows) {
      const rest: number[] = [];
      const mcp: number[] = [];
      for (let i = 0; i < SEQUENTIAL; i++) {
        rest.push(await once(`${base}${row.rest}`, { headers: auth }));
        mcp.push(
          await once(`${base}/v1/mcp`, {
            method: 'POST',
            headers: mcpHeaders,
            body: JSON.stringify({
              jsonrpc: '2.0',
              id: i,
              method: 'tools/call',
              params: { name: row.tool, arguments: row.args },
            }),
          }),
        );
      }
      const [r50, m50] = [percentile(rest, 50), percentile(mcp, 50)];
      process.stdout.write(
        `  ${row.name.padEnd(44)} REST ${fmt(r50)} ms   MCP ${fmt(m50)} ms   ratio ${(m50 / r50).toFixed(2)}\n`,
      );
    }
    process.stdout.write('\n');
    for (const row of rows) {
      process.stdout.write(`${row.name}\n`);
      let id = 0;
      const restRun = await openLoad({
        url: `${base}${row.rest}`,
        method: 'GET',
        headers: auth,
        okStatus: 200,
        ...LOAD,
        next: () => ({ body: '', events: 1 }),
      });
      const rest = line(`REST GET ${row.rest.split('?')[0]}`, restRun);
      const mcpRun = await openLoad({
        url: `${base}/v1/mcp`,
        headers: mcpHeaders,
        okStatus: 200,
        ...LOAD,
        next: () => ({
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: ++id,
            method: 'tools/call',
            params: { name: row.tool, arguments: row.args },
          }),
          events: 1,
        }),
      });
      const mcp = line(`MCP tools/call ${row.tool}`, mcpRun);
      process.stdout.write(
        `  ratio MCP/REST: p50 ${(mcp.p50 / rest.p50).toFixed(2)}, p95 ${(mcp.p95 / rest.p95).toFixed(2)}\n`,
      );
      results.push({ row, rest, mcp });
    }
    process.stdout.write('\n');
    for (const { row, rest, mcp } of results) {
      if (row.targeted)
        process.stdout.write(
          `${row.name}: ${targetLine({ target: `MCP p95 ≤ ${TARGET.p95Ms} ms`, measured: `${mcp.p95.toFixed(1)} ms`, met: mcp.p95 <= TARGET.p95Ms, why: 'demo data, not 10M events' })}\n`,
        );
      process.stdout.write(
        `${row.name}: ${targetLine({ target: `MCP/REST p95 ≤ ${TARGET.ratio}`, measured: `${mcp.p95.toFixed(1)} vs ${rest.p95.toFixed(1)} ms`, ratio: mcp.p95 / rest.p95, met: mcp.p95 / rest.p95 <= TARGET.ratio })}\n`,
      );
    }
  } finally {
    await closeServer(server);
    await api.stop();
    await processor.running.stop();
    await closeInfra(infra);
    await bench.close();
  }
}
