import http from 'node:http';
import { OpenLoopSchedule, WindowSet } from './open-loop.ts';

export { percentile } from './open-loop.ts';

/** One request of a workload: its body and how many events it carries. */
export interface Request {
  body: string;
  events: number;
  /** Path and query of this request when it differs from `url`'s (read benches vary their targets). */
  path?: string;
}

export interface OpenLoadResult {
  offeredEvents: number;
  offeredBatches: number;
  sentBatches: number;
  acceptedEvents: number;
  acceptedBatches: number;
  failedBatches: number;
  /** Batches due while `maxInFlight` requests were outstanding: offered, never sent. */
  droppedBatches: number;
  /** Seconds of sending (the schedule's span, not the wait for the last answers). */
  seconds: number;
  /** Each answered request's latency, send → full response, ms. */
  latenciesMs: number[];
  /** The latest a batch was sent after it fell due, ms: the sender's own lateness (a starved bench process). */
  maxLateMs: number;
  /** CPU seconds the bench process used while sending (its share of a core says whether the sender was the limit). */
  senderCpuSeconds: number;
  /** Answers by status, `+ Retry-After` when a 429 or 503 carried one (`0` is a network error). */
  answers: Map<string, number>;
}

/**
 * One request on `agent`; `done` gets its status (0 for a network error) and Retry-After once the answer is read.
 * Returns the request (a caller may time its socket).
 */
export function sendOne(
  agent: http.Agent,
  u: URL,
  req: Request & { method?: 'GET' | 'POST'; headers: Record<string, string> },
  done: (status: number, retryAfter?: string) => void,
): http.ClientRequest {
  const cr = http.request(
    {
      agent,
      host: u.hostname,
      port: u.port,
      path: req.path ?? `${u.pathname}${u.search}`,
      method: req.method ?? 'POST',
      headers: { ...req.headers, 'content-length': Buffer.byteLength(req.body) },
    },
    (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode ?? 0, res.headers['retry-after']));
    },
  );
  cr.on('error', () => done(0));
  cr.end(req.body);
  return cr;
}

/** How often the sender wakes to send what fell due: short enough that a batch waits at most this long. */
const TICK_MS = 5;

/**
 * Open-loop load: `eventsPerSecond` of the workload `next` yields, sent on schedule whether or not earlier requests
 * were answered (OpenLoopSchedule), until `seconds` have passed or `next` runs out. Past `maxInFlight` outstanding
 * requests a due batch is counted as not sent (the target was not reached by that much) instead of queued, so the
 * sender never becomes closed-loop. Stops by itself; resolves when every sent request has been answered.
 * `windows` (optional) collects offered events and latencies by send time, accepted events by answer time.
 */
export async function openLoad(o: {
  url: string;
  headers: Record<string, string>;
  okStatus: number;
  /** POST (default) sends `body`; GET sends none. */
  method?: 'GET' | 'POST';
  eventsPerSecond: number;
  next: () => Request | undefined;
  seconds?: number;
  maxInFlight: number;
  /**
   * Keep-alive connections at most (default 64); requests past them wait for a free one, and that wait is in their
   * latency. Opening hundreds at once overflows the server's listen queue (511) and the retried SYNs (1 s, 3 s, 7 s
   * later) would be timed as the server's latency; a load balancer's upstream pool is bounded the same way.
   */
  connections?: number;
  windows?: WindowSet;
  /** performance.now() the windows count from (default: this run's start). */
  windowStart?: number;
  onTick?: (elapsedSeconds: number, r: OpenLoadResult) => void;
}): Promise<OpenLoadResult> {
  const u = new URL(o.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: Math.min(o.maxInFlight, o.connections ?? 64) });
  const schedule = new OpenLoopSchedule(o.eventsPerSecond);
  const r: OpenLoadResult = {
    offeredEvents: 0,
    offeredBatches: 0,
    sentBatches: 0,
    acceptedEvents: 0,
    acceptedBatches: 0,
    failedBatches: 0,
    droppedBatches: 0,
    seconds: 0,
    latenciesMs: [],
    maxLateMs: 0,
    senderCpuSeconds: 0,
    answers: new Map(),
  };
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  const windowStart = o.windowStart ?? started;
  const limit = o.seconds ?? Number.POSITIVE_INFINITY;
  let inFlight = 0;
  let sending = true;
  let settle!: () => void;
  const allAnswered = new Promise<void>((resolve) => (settle = resolve));

  const send = (req: Request) => {
    // From the send call: a wait for a free connection is the server's slowness too (open loop, no omission).
    const t0 = performance.now();
    const w = o.windows?.at((t0 - windowStart) / 1000);
    inFlight++;
    r.sentBatches++;
    const done = (status: number, retryAfter?: string) => {
      const kind = `${status}${(status === 429 || status === 503) && retryAfter ? ' + Retry-After' : ''}`;
      r.answers.set(kind, (r.answers.get(kind) ?? 0) + 1);
      const t1 = performance.now();
      const ms = t1 - t0;
      r.latenciesMs.push(ms);
      w?.latenciesMs.push(ms);
      if (status === o.okStatus) {
        r.acceptedBatches++;
        r.acceptedEvents += req.events;
        if (o.windows) o.windows.at((t1 - windowStart) / 1000).acceptedEvents += req.events;
      } else r.failedBatches++;
      if (--inFlight === 0 && !sending) settle();
    };
    sendOne(agent, u, { ...req, method: o.method, headers: o.headers }, done);
  };

  let exhausted = false;
  while (!exhausted) {
    const elapsed = (performance.now() - started) / 1000;
    if (elapsed >= limit) break;
    while (schedule.due(elapsed)) {
      const req = o.next();
      if (!req) {
        exhausted = true;
        break;
      }
      r.maxLateMs = Math.max(r.maxLateMs, (elapsed - schedule.nextDueAt()) * 1000);
      schedule.offer(req.events);
      if (o.windows) o.windows.at((performance.now() - windowStart) / 1000).offeredEvents += req.events;
      if (inFlight >= o.maxInFlight) r.droppedBatches++;
      else send(req);
    }
    r.offeredEvents = schedule.offeredEvents;
    r.offeredBatches = schedule.offeredBatches;
    o.onTick?.(elapsed, r);
    if (!exhausted) await new Promise((resolve) => setTimeout(resolve, TICK_MS));
  }
  r.seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  r.senderCpuSeconds = (cpu.user + cpu.system) / 1e6;
  r.offeredEvents = schedule.offeredEvents;
  r.offeredBatches = schedule.offeredBatches;
  sending = false;
  if (inFlight > 0) await allAnswered;
  agent.destroy();
  return r;
}
