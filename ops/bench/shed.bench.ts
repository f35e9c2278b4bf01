/**
 * `npm run bench -- shed`: ingest at twice what it can serve, with and without load shedding (issue 32). An ingest
 * process on the real NATS and a scratch database; its capacity is measured first (closed loop, shedding off), then
 * BENCH_SHED_FACTOR (2) × that rate is offered open-loop for BENCH_SECONDS (20) to an ingest with shedding off
 * (INGEST_SHED_DELAY_MS=0, INGEST_MAX_INFLIGHT past the sender's connections) and to one with the defaults.
 * Printed per run: offered and accepted batches/s, the share refused (503 + Retry-After), p50/p99 latency (and the
 * p99 of the last third: a latency still growing shows there), ingest RSS at the start and at most, and its CPU.
 * Environment: BENCH_EVENTS (50 events per batch: ingest's work per request well above the sender's, so a busy machine still lets the sender offer twice what ingest serves), BENCH_CONNECTIONS (256: as a balancer's upstream pool, more than ingest needs, so requests wait in ingest, not in the sender), BENCH_NATS_URL, BENCH_DATABASE_URL.
 */
import os from 'node:os';
import { insertOrg, provisionSite } from '../../shared/tenancy/provision.ts';
import { openBenchEnvironment } from './harness.ts';
import { capacity, overload, startIngest, type ShedRow } from './shed-run.ts';

const NATS_URL = process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const say = (line: string) => process.stderr.write(`shed: ${line}\n`);
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

export async function runBench(): Promise<void> {
  const events = Number(process.env.BENCH_EVENTS ?? 50);
  const seconds = Number(process.env.BENCH_SECONDS ?? 20);
  const factor = Number(process.env.BENCH_SHED_FACTOR ?? 2);
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 256);
  const bench = await openBenchEnvironment(NATS_URL);
  try {
    const orgId = await insertOrg(bench.db, { name: 'bench', plan: 'enterprise' });
    const { publishableKey } = await provisionSite(bench.db, { orgId, name: 'shed', url: 'https://bench.example' });
    const services = {
      DATABASE_URL: bench.dbUrl,
      NATS_URL,
      REDIS_URL,
      STREAM_PREFIX: bench.prefix,
      FRICTION_SECRET: 'bench-secret-bench-secret-bench-secret-0123456789',
    };
    const off = { INGEST_SHED_DELAY_MS: '0', INGEST_MAX_INFLIGHT: '100000' };
    const rows: [string, ShedRow][] = [];
    let rate = 0;
    {
      const ingest = await startIngest(services, off);
      try {
        rate = (await capacity(ingest, publishableKey, { events, seconds: 8, connections: 64 })) * factor;
        say(`capacity ${fmt(rate / factor)} batches/s of ${events} events; offering ${fmt(rate)}/s`);
        rows.push([
          'shedding off',
          await overload(ingest, publishableKey, { events, rate, seconds, connections, maxInFlight: 20_000 }),
        ]);
      } finally {
        await ingest.stop();
      }
    }
    {
      const ingest = await startIngest(services, {});
      try {
        rows.push([
          'shedding on (defaults)',
          await overload(ingest, publishableKey, { events, rate, seconds, connections, maxInFlight: 20_000 }),
        ]);
      } finally {
        await ingest.stop();
      }
    }
    const out = [
      `ingest at ${factor} × its capacity (${fmt(rate / factor)} batches/s of ${events} events, closed loop, 64 connections); ${seconds} s open loop, ${connections} connections; load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
      '',
      '| run | offered/s | accepted/s | refused (503 + Retry-After) | not sent | p50 ms | p99 ms | p99 last third ms | RSS start → max MB | ingest cores | sender late ms, cores |',
      '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
      ...rows.map(
        ([what, r]) =>
          `| ${what} | ${fmt(r.offeredRate)} | ${fmt(r.acceptedRate)} | ${(r.shedShare * 100).toFixed(0)} % | ${fmt(r.dropped)} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.p99Late)} | ${fmt(r.rssStartMb)} → ${fmt(r.rssMaxMb)} | ${r.ingestCores.toFixed(2)} | ${fmt(r.senderLateMs)}, ${r.senderCores.toFixed(2)} |`,
      ),
      '',
      ...rows.map(([what, r]) => `${what}: answers ${[...r.answers].map(([k, v]) => `${k}: ${fmt(v)}`).join(', ')}`),
    ];
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    await bench.close();
  }
}
