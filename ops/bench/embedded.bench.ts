/**
 * `npm run bench -- embedded`: the embedded default as a user runs it. `friction start` (PGlite + TimescaleDB,
 * the in-process bus logged to disk, in-process limiter) starts in a fresh data dir as a child process; SDK-sized batches (one session, two
 * events, the SDK's shape from workload.ts) are sent open-loop at a target rate; printed: the achieved rate, p50/p99
 * latency, events stored per second end to end (the processor's committed-events counter on /metrics, over the
 * same window) and the backlog left at the end, beside a floor measured in the same run: a bare node:http handler
 * that parses the same batches and answers 202 (bare-ingest-server.ts). CPU per batch of each server process is
 * read from /proc: it does not depend on what else the machine runs.
 *
 * Environment: BENCH_RATE (1000 batches/s), BENCH_SECONDS (30, after BENCH_WARMUP_SECONDS 5 at the same rate),
 * BENCH_CONNECTIONS (64 keep-alive connections).
 */
import http from 'node:http';
import { createInterface } from 'node:readline';
import { mkdtempSync, readFileSync, readdirSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { freePort } from '../../shared/testing/processes.ts';
import { processCpuSeconds, stop, waitReady } from './harness.ts';
import { percentile, sendOne } from './load.ts';
import { targetLine } from './open-loop.ts';
import { Progress } from './progress.ts';
import { SiteProfile } from './workload.ts';

const RATE = Number(process.env.BENCH_RATE ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 5);
/** Requests in flight at most; a batch due past it is counted as not sent (the target was not reached). */
const MAX_IN_FLIGHT = 1024;
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const EVENTS_PER_BATCH = 2;
/** The targets for the embedded default: 1,000 two-event batches/s, p99 ≤ 100 ms, storage keeping up. */
const TARGET_BATCHES = 1000;
const TARGET_P99_MS = 100;
/** What was left at the end of sending counts as kept up when it is stored within this long. */
const DRAIN_BOUND_SECONDS = 2;
const cliPath = new URL('../cli.ts', import.meta.url).pathname;

interface OpenLoopResult {
  sent: number;
  accepted: number;
  failed: number;
  dropped: number;
  seconds: number;
  latenciesMs: number[];
  /** Latencies by the 5-second slice their request was sent in: where in the run the tail came from. */
  slices: number[][];
}

const SLICE_SECONDS = 5;

/**
 * Sends `rate` batches per second for `seconds`, on a 5 ms schedule whatever the server answers (open loop): the
 * batches due by now are sent now. The achieved rate is what was answered 202, not what was asked.
 */
async function openLoop(o: {
  url: string;
  key: string;
  rate: number;
  seconds: number;
  label: string;
  seed: number;
}): Promise<OpenLoopResult> {
  const u = new URL(o.url);
  // Bounded like load.ts's senders: hundreds of connections opened at once overflow the listen queue and the retried
  // SYNs would be timed as latency; a request waiting for a free connection has that wait in its latency.
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const profile = new SiteProfile({ seed: o.seed });
  const progress = new Progress(o.label, o.seconds);
  const latencies: number[] = [];
  const slices: number[][] = [];
  let sent = 0;
  let accepted = 0;
  let failed = 0;
  let dropped = 0;
  let inFlight = 0;
  let settle!: () => void;
  const allAnswered = new Promise<void>((r) => (settle = r));
  let sending = true;
  const one = (body: string) => {
    const t0 = performance.now();
    const slice = (slices[Math.floor((t0 - started) / 1000 / SLICE_SECONDS)] ??= []);
    inFlight++;
    const done = (ok: boolean) => {
      latencies.push(performance.now() - t0);
      slice.push(performance.now() - t0);
      if (ok) accepted++;
      else failed++;
      if (--inFlight === 0 && !sending) settle();
    };
    const headers = { authorization: `Bearer ${o.key}`, 'content-type': 'application/json' };
    sendOne(agent, u, { body, events: EVENTS_PER_BATCH, headers }, (status) => done(status === 202));
  };
  const started = performance.now();
  let due = 0;
  for (;;) {
    const elapsed = (performance.now() - started) / 1000;
    if (elapsed >= o.seconds) break;
    const target = Math.floor(elapsed * o.rate);
    while (due < target) {
      due++;
      if (inFlight >= MAX_IN_FLIGHT) {
        dropped++;
        continue;
      }
      const b = profile.batch(`bench-${due % 5000}`, EVENTS_PER_BATCH, Date.now());
      sent++;
      one(
        JSON.stringify({
          session_id: b.sessionId,
          sent_at: new Date().toISOString(),
          context: { device: 'desktop', viewport: { w: 1280, h: 800 } },
          events: b.events.map((e) => ({ ...e, id: randomUUID() })),
        }),
      );
    }
    progress.update(elapsed, `${accepted} accepted`);
    await new Promise((r) => setTimeout(r, 5));
  }
  const seconds = (performance.now() - started) / 1000;
  sending = false;
  if (inFlight > 0) await allAnswered;
  progress.done(`${accepted} accepted`);
  agent.destroy();
  return { sent, accepted, failed, dropped, seconds, latenciesMs: latencies, slices };
}

/** Sums the samples of one metric on /metrics (loopback may scrape without a token), filtered by a label text. */
async function metric(baseUrl: string, name: string, labelText = ''): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (labelText && !line.includes(labelText)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

const firstLine = (child: ChildProcess): Promise<string> =>
  new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.once('line', (l) => {
      rl.close();
      resolve(l);
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code} before listening`)));
  });

async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** CPU seconds per thread of a process (Linux /proc; empty elsewhere), keyed by thread id and name. */
function threadCpuSeconds(pid: number | undefined): Map<string, number> {
  const out = new Map<string, number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
      out.set(`${tid} ${name}`, (Number(fields[11]) + Number(fields[12])) / 100);
    }
  } catch {
    /* not Linux, or the process is gone */
  }
  return out;
}

/** The threads that used the most CPU between two readings, as "name: ms per batch". */
function busiestThreads(before: Map<string, number>, after: Map<string, number>, batches: number): string {
  return [...after]
    .map(([k, v]) => [k, v - (before.get(k) ?? 0)] as const)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([k, v]) => `${k.slice(k.indexOf(' ') + 1)} ${((v * 1000) / Math.max(1, batches)).toFixed(3)}`)
    .join(', ');
}

interface Row {
  what: string;
  result: OpenLoopResult;
  cpuSeconds: number;
}

export async function runBench(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'friction-bench-embedded-'));
  const children: ChildProcess[] = [];
  try {
    // The floor first, in its own process like the server it is compared with.
    const bare = spawn(process.execPath, [new URL('./bare-ingest-server.ts', import.meta.url).pathname], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(bare);
    const barePort = (JSON.parse(await firstLine(bare)) as { port: number }).port;
    const bareUrl = `http://127.0.0.1:${barePort}/v1/ingest`;
    await openLoop({ url: bareUrl, key: 'none', rate: RATE, seconds: WARMUP_SECONDS, label: 'floor warm-up', seed: 1 });
    const bareCpu0 = processCpuSeconds(bare.pid);
    const floor = await openLoop({
      url: bareUrl,
      key: 'none',
      rate: RATE,
      seconds: SECONDS,
      label: `floor @${RATE}/s`,
      seed: 2,
    });
    const floorRow: Row = {
      what: 'bare node:http handler (floor)',
      result: floor,
      cpuSeconds: processCpuSeconds(bare.pid) - bareCpu0,
    };
    await stop(bare);

    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const env: Record<string, string | undefined> = {
      ...process.env,
      FRICTION_DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
      INGEST_RATE_LIMIT_PER_MIN: '100000000',
    };
    for (const k of ['DATABASE_URL', 'NATS_URL', 'REDIS_URL', 'PUBLIC_BASE_URL', 'METRICS_TOKEN']) delete env[k];
    const prof = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
    const started = performance.now();
    const friction = spawn(process.execPath, [...prof, cliPath, 'start'], {
      env,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(friction);
    friction.once('exit', (code, signal) => {
      if (code !== 0 && signal !== 'SIGTERM') process.stderr.write(`friction start exited (${code ?? signal})\n`);
    });
    await waitReady(`${baseUrl}/healthz`, 120_000);
    const credsFile = join(dataDir, 'credentials.json');
    const creds = await waitFor(
      'credentials.json',
      () =>
        existsSync(credsFile)
          ? (JSON.parse(readFileSync(credsFile, 'utf8')) as { publishable_key: string })
          : undefined,
      // The first start creates and migrates the embedded database: minutes on a loaded machine.
      240_000,
    );
    process.stderr.write(`friction start (embedded) ready in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    const ingestUrl = `${baseUrl}/v1/ingest`;
    await openLoop({
      url: ingestUrl,
      key: creds.publishable_key,
      rate: RATE,
      seconds: WARMUP_SECONDS,
      label: 'friction warm-up',
      seed: 3,
    });
    const stored0 = await metric(baseUrl, 'friction_processor_events_total', 'outcome="stored"');
    const tx0 = await metric(baseUrl, 'friction_processor_batch_duration_seconds_count');
    const txSeconds0 = await metric(baseUrl, 'friction_processor_batch_duration_seconds_sum');
    const cpu0 = processCpuSeconds(friction.pid);
    const threads0 = threadCpuSeconds(friction.pid);
    const run = await openLoop({
      url: ingestUrl,
      key: creds.publishable_key,
      rate: RATE,
      seconds: SECONDS,
      label: `friction @${RATE}/s`,
      seed: 4,
    });
    const cpu = processCpuSeconds(friction.pid) - cpu0;
    const threads = busiestThreads(threads0, threadCpuSeconds(friction.pid), run.accepted + run.failed);
    const stored = (await metric(baseUrl, 'friction_processor_events_total', 'outcome="stored"')) - stored0;
    const backlog = await metric(baseUrl, 'friction_processor_lag_messages');
    const transactions = (await metric(baseUrl, 'friction_processor_batch_duration_seconds_count')) - tx0;
    const txSeconds = (await metric(baseUrl, 'friction_processor_batch_duration_seconds_sum')) - txSeconds0;
    // How long the processor needs for what was left: a few seconds means storage kept up, more means it did not.
    const drainStart = performance.now();
    const drained = await waitFor(
      'the backlog to drain',
      async () => ((await metric(baseUrl, 'friction_processor_lag_messages')) === 0 ? true : undefined),
      120_000,
    ).then(
      () => (performance.now() - drainStart) / 1000,
      () => Number.NaN,
    );
    const fr: Row = { what: 'friction start (embedded)', result: run, cpuSeconds: cpu };
    print(floorRow, fr, {
      storedPerSecond: stored / run.seconds,
      backlogBatches: backlog,
      drainSeconds: drained,
      transactions,
      txSeconds,
      threads,
    });
  } finally {
    for (const c of children) await stop(c);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function print(
  floor: Row,
  fr: Row,
  e: {
    storedPerSecond: number;
    backlogBatches: number;
    drainSeconds: number;
    transactions: number;
    txSeconds: number;
    threads: string;
  },
): void {
  const rate = (r: OpenLoopResult) => r.accepted / r.seconds;
  const cpuMs = (row: Row) => (row.cpuSeconds * 1000) / Math.max(1, row.result.accepted + row.result.failed);
  const fmt = (n: number, d = 0) =>
    Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }) : 'n/a';
  const line = (cells: string[]) => process.stdout.write(`| ${cells.join(' | ')} |\n`);
  process.stdout.write(
    `\nembedded default, ${EVENTS_PER_BATCH}-event SDK batches open-loop at ${RATE}/s for ${SECONDS} s (after ${WARMUP_SECONDS} s warm-up)\n\n`,
  );
  line(['measure', 'friction start', 'floor', 'ratio', 'target']);
  line(['---', '---', '---', '---', '---']);
  line([
    'batches/s accepted (asked ' + RATE + ')',
    fmt(rate(fr.result)),
    fmt(rate(floor.result)),
    fmt(rate(fr.result) / rate(floor.result), 2),
    `≥ ${fmt(RATE)}`,
  ]);
  line([
    'not sent (over ' + MAX_IN_FLIGHT + ' in flight) / failed',
    `${fr.result.dropped} / ${fr.result.failed}`,
    `${floor.result.dropped} / ${floor.result.failed}`,
    '',
    '0 / 0',
  ]);
  for (const [p, target] of [
    [50, ''],
    [99, `≤ ${TARGET_P99_MS}`],
  ] as const)
    line([
      `p${p} latency ms`,
      fmt(percentile(fr.result.latenciesMs, p), 1),
      fmt(percentile(floor.result.latenciesMs, p), 1),
      '',
      target,
    ]);
  line(['server CPU ms per batch', fmt(cpuMs(fr), 3), fmt(cpuMs(floor), 3), fmt(cpuMs(fr) / cpuMs(floor), 1), '']);
  line(['busiest threads, CPU ms per batch', e.threads, '', '', '']);
  line([
    'events stored/s end to end (same window)',
    fmt(e.storedPerSecond),
    '',
    fmt(e.storedPerSecond / (rate(fr.result) * EVENTS_PER_BATCH), 2) + ' of accepted',
    '≈ 1.00',
  ]);
  line(['backlog at the end (batches)', fmt(e.backlogBatches), '', '', 'bounded']);
  line(['then drained in s', fmt(e.drainSeconds, 1), '', '', '']);
  // One transaction per fetch: the busier the stream, the more batches each one stores.
  line([
    'processor transactions/s, mean ms, batches per transaction',
    `${fmt(e.transactions / fr.result.seconds)}, ${fmt((e.txSeconds * 1000) / Math.max(1, e.transactions), 1)}, ${fmt(fr.result.accepted / Math.max(1, e.transactions), 1)}`,
    '',
    '',
    '',
  ]);
  const tail = (r: OpenLoopResult) => r.slices.map((l) => fmt(percentile(l, 99))).join(' ');
  process.stdout.write(
    `\np99 ms per ${SLICE_SECONDS} s of sending: friction ${tail(fr.result)}; floor ${tail(floor.result)}\n\n`,
  );
  // The targets for the embedded default, judged on this run.
  const accepted = rate(fr.result);
  const reached = accepted >= 0.95 * TARGET_BATCHES && fr.result.dropped === 0 && fr.result.failed === 0;
  const p99 = percentile(fr.result.latenciesMs, 99);
  const storedShare = e.storedPerSecond / Math.max(1e-9, accepted * EVENTS_PER_BATCH);
  const keptUp = storedShare >= 0.95 && e.drainSeconds <= DRAIN_BOUND_SECONDS;
  const asked = RATE >= TARGET_BATCHES ? undefined : `run asked ${fmt(RATE)}/s, below the target`;
  const say = (l: string) => process.stdout.write(`${l}\n`);
  say(
    targetLine({
      target: `at least ${fmt(TARGET_BATCHES)} two-event batches/s accepted`,
      measured: `${fmt(accepted)}/s (${fr.result.dropped} not sent, ${fr.result.failed} failed)`,
      ratio: accepted / TARGET_BATCHES,
      met: asked ? undefined : reached,
      why: asked,
    }),
  );
  say(
    targetLine({
      target: `p99 latency ≤ ${TARGET_P99_MS} ms at that rate`,
      measured: `${fmt(p99, 1)} ms`,
      ratio: p99 / TARGET_P99_MS,
      met: asked ? undefined : p99 <= TARGET_P99_MS && reached,
      why: asked ?? (reached ? undefined : 'and the rate was not reached'),
    }),
  );
  say(
    targetLine({
      target: `storage keeping up (≥ 0.95 of accepted events stored in the window, the rest drained within ${DRAIN_BOUND_SECONDS} s)`,
      measured: `${fmt(storedShare, 2)} stored, drained in ${fmt(e.drainSeconds, 1)} s`,
      ratio: storedShare,
      met: keptUp,
    }),
  );
  say('');
}
