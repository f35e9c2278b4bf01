/**
 * `npm run bench -- shed`: ingest at half, once and twice what it can serve (issue 32, load shedding). An ingest
 * process on the real NATS and a scratch database, first with shedding off (INGEST_LATENCY_TARGET_MS=0,
 * INGEST_MAX_INFLIGHT past the connections): its capacity measured closed loop (two sender threads, 64 connections),
 * then twice that offered open loop for BENCH_SECONDS (20) by sender threads of their own (shed-sender.ts); then a
 * fresh one with the defaults, offered each multiple of the same capacity. Printed per run: the target and achieved
 * rate with the sender's own lateness (issued after its scheduled time) and the wait for a free connection, the share
 * refused (429/503, and how many lacked Retry-After), the accepted requests' p50/p99 from their scheduled send time
 * (and the p99 of the last third: a latency still growing shows there), ingest RSS at the start and at most, and
 * ingest's and the senders' CPU.
 * Environment: BENCH_EVENTS (50 events per batch: ingest's work per request well above the sender's),
 * BENCH_CONNECTIONS (1024 in all: as browsers, enough that requests seldom wait for one), BENCH_SENDER_THREADS (2),
 * BENCH_SHED_MULTIPLES (0.5,1,2), BENCH_NATS_URL, BENCH_DATABASE_URL.
 */
import os from 'node:os';
import { insertOrg, provisionSite } from '../../shared/tenancy/provision.ts';
import { openBenchEnvironment } from './harness.ts';
import { capacity, offer, startIngest, type ShedRow } from './shed-run.ts';

const NATS_URL = process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const say = (line: string) => process.stderr.write(`shed: ${line}\n`);
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

export async function runBench(): Promise<void> {
  const events = Number(process.env.BENCH_EVENTS ?? 50);
  const seconds = Number(process.env.BENCH_SECONDS ?? 20);
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 1024);
  const threads = Number(process.env.BENCH_SENDER_THREADS ?? 2);
  const multiples = (process.env.BENCH_SHED_MULTIPLES ?? '0.5,1,2').split(',').map(Number);
  const bench = await openBenchEnvironment(NATS_URL);
  try {
    const orgId = await insertOrg(bench.db, { name: 'bench', plan: 'enterprise' });
    const { publishableKey: key } = await provisionSite(bench.db, {
      orgId,
      name: 'shed',
      url: 'https://bench.example',
    });
    const services = {
      DATABASE_URL: bench.dbUrl,
      NATS_URL,
      REDIS_URL,
      STREAM_PREFIX: bench.prefix,
      FRICTION_SECRET: 'bench-secret-bench-secret-bench-secret-0123456789',
    };
    const rows: [string, ShedRow, string][] = [];
    let served = 0;
    {
      // Capacity with shedding off: what the process serves flat out, nothing refused.
      const ingest = await startIngest(services, { INGEST_LATENCY_TARGET_MS: '0', INGEST_MAX_INFLIGHT: '100000' });
      try {
        const t = { ingest, key, events, threads };
        served = await capacity(t, { seconds: 8, connections: 64 });
        say(`capacity ${fmt(served)} batches/s of ${events} events (load ${load()})`);
        rows.push(['shedding off, 2×', await offer(t, { rate: 2 * served, seconds, connections }), load()]);
      } finally {
        await ingest.stop();
      }
    }
    {
      const ingest = await startIngest(services, {});
      try {
        const t = { ingest, key, events, threads };
        await capacity(t, { seconds: 4, connections: 8 }); // a warm-up (the JIT, the key cache)
        for (const m of multiples) {
          rows.push([
            `shedding on (defaults), ${m}×`,
            await offer(t, { rate: m * served, seconds, connections }),
            load(),
          ]);
          say(`${m}× done (load ${load()})`);
        }
      } finally {
        await ingest.stop();
      }
    }
    const out = [
      `ingest capacity ${fmt(served)} batches/s of ${events} events (closed loop, 64 connections); each run ${seconds} s open loop over ${connections} connections from ${threads} sender threads`,
      '',
      '| run | target/s | achieved/s | sender late p99 ms | connection wait p99 ms | refused (429/503) | without Retry-After | other answers | accepted p50 ms | accepted p99 ms | p99 last third ms | RSS start → max MB | ingest cores | sender cores | load average |',
      '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
      ...rows.map(
        ([what, r, l]) =>
          `| ${what} | ${fmt(r.targetRate)} | ${fmt(r.achievedRate)} | ${fmt(r.senderLateP99)} | ${fmt(r.connectionWaitP99)} | ${((r.refused / Math.max(1, r.requests)) * 100).toFixed(0)} % | ${r.refusedWithoutRetryAfter} | ${[...r.other].map(([k, v]) => `${k}: ${v}`).join(', ') || '-'} | ${fmt(r.acceptedP50)} | ${fmt(r.acceptedP99)} | ${fmt(r.acceptedP99LastThird)} | ${fmt(r.rssStartMb)} → ${fmt(r.rssMaxMb)} | ${r.ingestCores.toFixed(2)} | ${r.senderCores.toFixed(2)} | ${l} |`,
      ),
    ];
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    await bench.close();
  }
}
