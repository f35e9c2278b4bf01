/**
 * Ingest at twice what it can serve (issue 32, load shedding): an ingest process of its own on the real stream, its
 * capacity measured first (closed loop, shedding off), then an open-loop run at a multiple of it. Shared by
 * `npm run bench -- shed`. RSS is read from /proc while the run lasts.
 */
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { freePort, kill, spawnRole, waitReady } from '../../shared/testing/processes.ts';
import { sdkBatch } from '../testing/sdk-batch.ts';
import { openLoad, percentile, sendOne, type Request } from './load.ts';
import { processCpuSeconds } from './harness.ts';
import { WindowSet } from './open-loop.ts';

export interface IngestUnderTest {
  url: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `friction ingest` on the given services with `env` on top (the shedding settings of a run). */
export async function startIngest(services: Record<string, string>, env: Record<string, string>) {
  const port = await freePort();
  const proc = spawnRole(['ops/cli.ts', 'ingest'], {
    ...services,
    PORT: String(port),
    LOG_LEVEL: 'warn',
    INGEST_RATE_LIMIT_PER_MIN: '100000000',
    // The product's default (spawnRole turns it off for other tests); a run's `env` may change it.
    INGEST_SHED_DELAY_MS: '100',
    ...env,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitReady(`${url}/readyz`, 120_000, proc);
  // The browser SDK is built in the background when ingest starts (seconds of CPU): measured under that, the
  // capacity would be too low.
  await waitReady(`${url}/v1/sdk.js`, 120_000, proc);
  return { url, proc, stop: () => kill(proc) } satisfies IngestUnderTest;
}

/** Resident set size of a process, MB (/proc; NaN elsewhere). */
function rssMb(pid: number | undefined): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** SDK batches of `events` events, a pool of `n` reused in turn (a repeat is a duplicate batch: the same work for ingest). */
function workload(events: number, n = 4000): () => Request {
  const bodies = Array.from({ length: n }, (_, i) =>
    JSON.stringify(sdkBatch({ events, sessionId: `shed-${i % 500}`, page: `/p${i % 20}`, sentAt: Date.now() })),
  );
  let i = 0;
  return () => ({ body: bodies[i++ % n]!, events });
}

export interface ShedRow {
  offeredRate: number;
  /** Batches answered 202 per second. */
  acceptedRate: number;
  /** Answers by status (`503 + Retry-After`, …). */
  answers: Map<string, number>;
  /** Share of the answered batches refused with 429/503. */
  shedShare: number;
  /** Batches the sender could not send (its in-flight bound reached: the server too slow to answer). */
  dropped: number;
  p50: number;
  p99: number;
  /** p99 of the answers to requests sent in the last third of the run: a latency that grows shows here. */
  p99Late: number;
  rssStartMb: number;
  rssMaxMb: number;
  /** Ingest CPU over the run, seconds per second. */
  ingestCores: number;
  /** The sender's own lateness at most (ms) and its CPU (cores): a starved sender inflates every latency. */
  senderLateMs: number;
  senderCores: number;
}

/**
 * Closed loop: `connections` senders, each sending its next batch when the last is answered, for `seconds`, after
 * as long again to warm up (the JIT, the key cache): the batches/s ingest serves.
 */
export async function capacity(
  ingest: IngestUnderTest,
  key: string,
  o: { events: number; seconds: number; connections: number },
): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: o.connections });
  const u = new URL(`${ingest.url}/v1/ingest`);
  const next = workload(o.events);
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const post = (req: Request) => new Promise<number>((resolve) => sendOne(agent, u, { ...req, headers }, resolve));
  const closedLoop = async () => {
    const until = performance.now() + o.seconds * 1000;
    let accepted = 0;
    await Promise.all(
      Array.from({ length: o.connections }, async () => {
        while (performance.now() < until) if ((await post(next())) === 202) accepted++;
      }),
    );
    return accepted / o.seconds;
  };
  try {
    await closedLoop();
    return await closedLoop();
  } finally {
    agent.destroy();
  }
}

/** Open loop at `rate` batches/s for `seconds`; RSS sampled every 200 ms. */
export async function overload(
  ingest: IngestUnderTest,
  key: string,
  o: { events: number; rate: number; seconds: number; connections: number; maxInFlight: number },
): Promise<ShedRow> {
  const pid = ingest.proc.pid;
  const rssStartMb = rssMb(pid);
  let rssMaxMb = rssStartMb;
  const sampler = setInterval(() => (rssMaxMb = Math.max(rssMaxMb, rssMb(pid))), 200);
  const cpu0 = processCpuSeconds(pid);
  // Three windows: the last one's latencies say whether latency was still growing at the end.
  const thirds = new WindowSet(o.seconds / 3);
  const started = performance.now();
  const next = workload(o.events);
  const r = await openLoad({
    url: `${ingest.url}/v1/ingest`,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    okStatus: 202,
    eventsPerSecond: o.rate * o.events,
    next,
    seconds: o.seconds,
    maxInFlight: o.maxInFlight,
    connections: o.connections,
    windows: thirds,
  });
  clearInterval(sampler);
  rssMaxMb = Math.max(rssMaxMb, rssMb(pid));
  const answered = r.acceptedBatches + r.failedBatches;
  const refused = [...r.answers].filter(([k]) => /^(429|503)/.test(k)).reduce((n, [, v]) => n + v, 0);
  return {
    offeredRate: r.offeredBatches / r.seconds,
    acceptedRate: r.acceptedBatches / r.seconds,
    answers: r.answers,
    shedShare: answered ? refused / answered : 0,
    dropped: r.droppedBatches,
    p50: percentile(r.latenciesMs, 50),
    p99: percentile(r.latenciesMs, 99),
    p99Late: percentile(thirds.list[2]?.latenciesMs ?? [], 99),
    rssStartMb,
    rssMaxMb,
    ingestCores: (processCpuSeconds(pid) - cpu0) / ((performance.now() - started) / 1000),
    senderLateMs: r.maxLateMs,
    senderCores: r.senderCpuSeconds / r.seconds,
  };
}
