/**
 * Ingest at a multiple of what it can serve (issue 32, load shedding): an ingest process of its own on the real
 * stream; its capacity measured closed loop, then open-loop runs at fractions and multiples of it. The senders are
 * worker threads (shed-sender.ts), each with its share of the rate and its own connections, and every latency counts
 * from the request's scheduled send time, so a sender that cannot keep up shows as its own lateness, apart from
 * ingest's time. Shared by `npm run bench -- shed` and ops/bench/shed.int.test.ts. RSS is read from /proc.
 */
import type { ChildProcess } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { DEFAULT_INGEST_LATENCY_TARGET_MS } from '../../shared/config.ts';
import { freePort, kill, spawnRole, waitReady } from '../../shared/testing/processes.ts';
import { sdkBatch } from '../testing/sdk-batch.ts';
import { processCpuSeconds, processRssMiB } from './harness.ts';
import { summarizeSends, type SendSummary } from './open-loop.ts';
import type { SenderJob, SenderResult } from './shed-sender.ts';

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
    // The product's defaults (spawnRole turns the latency target off for other tests); a run's `env` may change them.
    INGEST_LATENCY_TARGET_MS: String(DEFAULT_INGEST_LATENCY_TARGET_MS),
    // The senders are one address holding many connections, as a load balancer would.
    MAX_CONNECTIONS_PER_IP: '0',
    ...env,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitReady(`${url}/readyz`, 120_000, proc);
  // The browser SDK is built in the background when ingest starts (seconds of CPU): measured under that, the
  // capacity would be too low.
  await waitReady(`${url}/v1/sdk.js`, 120_000, proc);
  return { url, proc, stop: () => kill(proc) } satisfies IngestUnderTest;
}

/** SDK batches of `events` events as JSON objects without a batch_id (the senders give each request its own). */
function bodies(events: number, n = 500): string[] {
  return Array.from({ length: n }, (_, i) =>
    JSON.stringify(sdkBatch({ events, sessionId: `shed-${i}`, page: `/p${i % 20}`, sentAt: Date.now() })),
  );
}

/** What a sender thread is given besides its share: where, with which key, and the common start. */
interface Target {
  ingest: IngestUnderTest;
  key: string;
  events: number;
  /** Sender threads (default 2). */
  threads?: number;
}

/** Runs `threads` sender threads on `job` (each its share of rate and connections) and returns what each posted. */
async function senders<T>(t: Target, job: Omit<SenderJob, 'url' | 'headers' | 'bodies' | 'startAt' | 'offsetMs'>) {
  const threads = t.threads ?? 2;
  const shared = {
    url: `${t.ingest.url}/v1/ingest`,
    headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
    bodies: bodies(t.events),
  };
  const workers = Array.from({ length: threads }, (_, k) => {
    const data: Omit<SenderJob, 'startAt'> = {
      ...shared,
      ...job,
      rate: job.rate / threads,
      connections: Math.max(1, Math.round(job.connections / threads)),
      offsetMs: job.rate > 0 ? (k * 1000) / job.rate : 0,
    };
    const w = new Worker(new URL('./shed-sender.ts', import.meta.url), { workerData: data });
    const ready = new Promise<void>((resolve, reject) => {
      w.once('message', () => resolve());
      w.once('error', reject);
    });
    return { w, ready };
  });
  await Promise.all(workers.map((x) => x.ready));
  // Every thread loaded: the first request falls due a moment after all of them have the start.
  const startAt = performance.timeOrigin + performance.now() + 50;
  return Promise.all(
    workers.map(
      ({ w }) =>
        new Promise<T>((resolve, reject) => {
          w.once('message', (m: T) => {
            resolve(m);
            void w.terminate();
          });
          w.once('error', reject);
          w.postMessage(startAt);
        }),
    ),
  );
}

/**
 * Closed loop: `connections` connections, each sending its next batch when the last is answered, for `seconds`, after
 * as long again to warm up (the JIT, the key cache): the batches/s ingest serves.
 */
export async function capacity(t: Target, o: { seconds: number; connections: number }): Promise<number> {
  const job = { rate: 0, seconds: o.seconds, connections: o.connections, closed: true };
  await senders<number>(t, job);
  const accepted = await senders<number>(t, job);
  return accepted.reduce((a, b) => a + b, 0) / o.seconds;
}

export interface ShedRow extends SendSummary {
  rssStartMb: number;
  rssMaxMb: number;
  /** Ingest CPU over the run, seconds per second. */
  ingestCores: number;
  /** The sender threads' CPU over the run, seconds per second. */
  senderCores: number;
}

/** Open loop at `rate` batches/s for `seconds` over `connections` connections in all; RSS sampled every 100 ms. */
export async function offer(t: Target, o: { rate: number; seconds: number; connections: number }): Promise<ShedRow> {
  const pid = t.ingest.proc.pid;
  const rssStartMb = processRssMiB(pid);
  let rssMaxMb = rssStartMb;
  const sampler = setInterval(() => (rssMaxMb = Math.max(rssMaxMb, processRssMiB(pid))), 100);
  const cpu0 = processCpuSeconds(pid);
  const started = performance.now();
  const parts = await senders<SenderResult>(t, { rate: o.rate, seconds: o.seconds, connections: o.connections });
  clearInterval(sampler);
  rssMaxMb = Math.max(rssMaxMb, processRssMiB(pid));
  const elapsed = (performance.now() - started) / 1000;
  return {
    ...summarizeSends(parts, o.rate, o.seconds),
    rssStartMb,
    rssMaxMb,
    ingestCores: (processCpuSeconds(pid) - cpu0) / elapsed,
    senderCores: parts.reduce((n, p) => n + p.cpuSeconds, 0) / o.seconds,
  };
}
