/**
 * One open-loop sender thread of the shedding bench and test (shed-run.ts starts several): its share of the rate, on
 * its own event loop and connections, so that the thread measuring is never the one queueing. Request i falls due at
 * `offsetMs + i × 1000 / rate` after the common start and is timed from then (its scheduled send time), not from when
 * the thread got round to it: a sender that falls behind shows as `issued - scheduled`, apart from the server's time.
 * Every time is ms after the start (`startAt`, performance.timeOrigin-based, the same clock in every thread).
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';
import type { SendColumns } from './open-loop.ts';
import { sendOne } from './load.ts';

export interface SenderJob {
  url: string;
  headers: Record<string, string>;
  /** SDK batches as JSON objects without a batch_id; each request gets a fresh one (nothing is a duplicate). */
  bodies: string[];
  /** Requests per second this thread sends. */
  rate: number;
  /** When its first request falls due, ms after the start (threads interleave their schedules). */
  offsetMs: number;
  seconds: number;
  /** Keep-alive connections of this thread; a request with none free waits for one (`socket - issued`). */
  connections: number;
  /** The common start, performance.timeOrigin + performance.now() (ms), sent once every thread is ready. */
  startAt: number;
  /**
   * `closed`: no schedule; each connection sends its next request when the last is answered, for `seconds` from the
   * start (what ingest serves), and only the accepted count is returned.
   */
  closed?: boolean;
}

/** Per request, ms after the start: when it fell due, was issued, got a connection and was answered; its status. */
export interface SenderResult extends SendColumns {
  /** This thread's CPU while sending, seconds. */
  cpuSeconds: number;
}

/** POSTs the i-th body with a fresh batch_id; `done` gets the status (0: network error) and whether Retry-After came. */
function post(
  agent: http.Agent,
  u: URL,
  job: SenderJob,
  i: number,
  done: (status: number, retryAfter: boolean) => void,
) {
  const body = `{"batch_id":"${randomUUID()}",${job.bodies[i % job.bodies.length]!.slice(1)}`;
  return sendOne(agent, u, { body, events: 0, headers: job.headers }, (status, retryAfter) =>
    done(status, retryAfter !== undefined),
  );
}

/** Closed loop: requests accepted in `seconds` over `connections` connections, each sending when answered. */
async function closedLoop(job: SenderJob): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: job.connections });
  const u = new URL(job.url);
  const until = job.startAt + job.seconds * 1000;
  let accepted = 0;
  let i = 0;
  await Promise.all(
    Array.from({ length: job.connections }, async () => {
      while (performance.timeOrigin + performance.now() < until) {
        const status = await new Promise<number>((resolve) => post(agent, u, job, i++, resolve));
        if (status === 202) accepted++;
      }
    }),
  );
  agent.destroy();
  return accepted;
}

function run(job: SenderJob): Promise<SenderResult> {
  const clock = () => performance.timeOrigin + performance.now() - job.startAt;
  const n = Math.floor(job.rate * job.seconds);
  const r: SenderResult = {
    scheduled: new Float64Array(n),
    issued: new Float64Array(n),
    socket: new Float64Array(n),
    answered: new Float64Array(n),
    status: new Int16Array(n),
    retryAfter: new Uint8Array(n),
    cpuSeconds: 0,
  };
  const agent = new http.Agent({ keepAlive: true, maxSockets: job.connections });
  const u = new URL(job.url);
  let outstanding = 0;
  let sending = true;
  const cpu0 = process.threadCpuUsage();
  return new Promise((resolve) => {
    const finish = () => {
      agent.destroy();
      resolve(r);
    };
    const send = (i: number) => {
      r.issued[i] = clock();
      outstanding++;
      post(agent, u, job, i, (status, retryAfter) => {
        r.answered[i] = clock();
        r.status[i] = status;
        r.retryAfter[i] = retryAfter ? 1 : 0;
        if (--outstanding === 0 && !sending) finish();
      }).on('socket', () => (r.socket[i] = clock()));
    };
    let i = 0;
    const tick = () => {
      const now = clock();
      for (; i < n; i++) {
        const due = job.offsetMs + (i * 1000) / job.rate;
        if (due > now) break;
        r.scheduled[i] = due;
        send(i);
      }
      if (i < n) {
        setTimeout(tick, Math.max(0, Math.min(5, job.offsetMs + (i * 1000) / job.rate - clock())));
        return;
      }
      sending = false;
      const cpu = process.threadCpuUsage(cpu0);
      r.cpuSeconds = (cpu.user + cpu.system) / 1e6;
      if (outstanding === 0) finish();
    };
    setTimeout(tick, Math.max(0, job.offsetMs - clock()));
  });
}

if (parentPort) {
  const port = parentPort;
  // Ready once loaded; the start comes when every thread is (a thread slow to start is not a late sender).
  const startAt = await new Promise<number>((resolve) => {
    port.once('message', resolve);
    port.postMessage('ready');
  });
  const job = { ...(workerData as Omit<SenderJob, 'startAt'>), startAt };
  if (job.closed) port.postMessage(await closedLoop(job));
  else {
    const result = await run(job);
    port.postMessage(result, [
      result.scheduled.buffer,
      result.issued.buffer,
      result.socket.buffer,
      result.answered.buffer,
      result.status.buffer,
      result.retryAfter.buffer,
    ] as ArrayBuffer[]);
  }
}
