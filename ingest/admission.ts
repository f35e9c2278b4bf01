import { monitorEventLoopDelay, performance, type EventLoopUtilization } from 'node:perf_hooks';
import { Counter, Gauge } from 'prom-client';
import { AppError } from '../shared/errors.ts';
import { registry } from '../shared/http/metrics.ts';
import type { Logger } from '../shared/logger.ts';

/** How often the shed share is adjusted to the event loop's delay. */
const STEP_MS = 250;
/**
 * Share of requests refused added per interval over the delay bound (times how many bounds late the loop was, up to
 * 4: a loop far behind reaches the share it needs within a second), and taken off per interval under it.
 */
const SHARE_UP = 0.1;
const SHARE_DOWN = 0.05;
/**
 * Event-loop utilization (share of the interval spent working, not waiting for I/O) from which a late loop counts as
 * this process's own overload. Below it the delay comes from elsewhere (other processes on the machine, a pause):
 * refusing requests would not make the loop any earlier.
 */
const BUSY_UTILIZATION = 0.9;
/** Some requests always go through: they are what shows the overload has passed. */
const MAX_SHARE = 0.95;
/** While shedding, one summary log line at most this often. */
const LOG_EVERY_MS = 10_000;

const shed = new Counter({
  name: 'friction_ingest_shed_total',
  help: 'Ingest requests refused with 503 and Retry-After before any work, by reason (inflight: the in-flight bound; delay: the event-loop delay bound)',
  labelNames: ['reason'] as const,
  registers: [registry],
});
const inflightGauge = new Gauge({
  name: 'friction_ingest_inflight',
  help: 'Ingest requests being served by this process',
  registers: [registry],
});
const shareGauge = new Gauge({
  name: 'friction_ingest_shed_share',
  help: 'Share of new ingest requests this process refuses because its event loop is late (0-0.95)',
  registers: [registry],
});

/**
 * The refusals, made once each: a refused request must cost next to nothing, and a new Error captures a stack trace
 * (measured: a third of the refusal's own CPU). They are read, never changed, by the error path.
 */
const refusals = new Map<string, AppError>();
function refusal(reason: 'inflight' | 'delay', retryAfterSec: number): AppError {
  const key = `${reason} ${retryAfterSec}`;
  let err = refusals.get(key);
  if (!err) {
    err = new AppError('unavailable', 503, 'ingest is overloaded; retry after the Retry-After delay', {
      retryAfterSec,
      retriable: true,
      details: { reason },
    });
    refusals.set(key, err);
  }
  return err;
}

export interface ShedOptions {
  /** Requests served at once at most (INGEST_MAX_INFLIGHT); the next one is refused at once. */
  maxInflight: number;
  /** Event-loop delay (90th percentile over 250 ms) above which a growing share of requests is refused (INGEST_SHED_DELAY_MS); 0: never by delay. */
  maxDelayMs: number;
  log: Logger;
  random?: () => number;
  now?: () => number;
}

/**
 * Load shedding for one ingest process: answers 503 with Retry-After before reading the body, so work beyond what the
 * process can serve costs a fraction of serving it (docs/scale.md has the measured share) instead of queueing, and
 * memory and latency stay bounded. Two signals:
 * - in flight: requests being served (waiting for the stream's ack, the key cache, the database) beyond
 *   `maxInflight`: each holds its body, so this bounds memory, and it catches a slow stream or database;
 * - delay: the event loop's delay, which grows as soon as the CPU cannot keep up (requests wait in socket buffers
 *   before the process even sees them). Every 250 ms the share of refused requests goes up by 0.1 per multiple of
 *   `maxDelayMs` the delay reached (up to 0.4) once the loop was late and busy at least 90 % of the time (its own
 *   work, not another process, made it late) for two intervals running (one is a stall, not overload, and leaves
 *   the share), and down by 0.05 after an interval that was not late, so the process settles at the share it can
 *   afford.
 * The SDK retries a 503 after Retry-After (1-5 s, longer as more is refused); nothing refused was accepted.
 */
export class LoadShedder {
  private readonly o: ShedOptions;
  private readonly random: () => number;
  private readonly now: () => number;
  private inflight = 0;
  private shedShare = 0;
  private lateIntervals = 0;
  private readonly histogram: ReturnType<typeof monitorEventLoopDelay> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private elu: EventLoopUtilization | undefined;
  private refusedSinceLog = 0;
  private lastLogAt = 0;

  constructor(o: ShedOptions) {
    this.o = o;
    this.random = o.random ?? Math.random;
    this.now = o.now ?? Date.now;
    if (o.maxDelayMs > 0) {
      this.histogram = monitorEventLoopDelay({ resolution: 10 });
      this.histogram.enable();
      this.elu = performance.eventLoopUtilization();
      this.timer = setInterval(() => {
        const now = performance.eventLoopUtilization();
        const busy = performance.eventLoopUtilization(now, this.elu).utilization;
        this.elu = now;
        this.adjust(this.histogram!.percentile(90) / 1e6, busy);
        this.histogram!.reset();
      }, STEP_MS);
      this.timer.unref();
    }
  }

  /** The share of new requests refused for delay right now. */
  get share(): number {
    return this.shedShare;
  }

  /**
   * One step of the share's control with what the last interval measured: the loop's delay (ms) and its utilization
   * (0-1). The timer calls it.
   */
  adjust(delayMs: number, utilization: number): void {
    const before = this.shedShare;
    const late = delayMs > this.o.maxDelayMs && utilization >= BUSY_UTILIZATION;
    this.lateIntervals = late ? this.lateIntervals + 1 : 0;
    // One late interval is a stall (a long collection, a synchronous build at start-up), not overload: it must last.
    const up = SHARE_UP * Math.min(4, Math.floor(delayMs / this.o.maxDelayMs));
    if (this.lateIntervals >= 2) this.shedShare = Math.min(MAX_SHARE, before + up);
    else if (!late) this.shedShare = Math.max(0, before - SHARE_DOWN);
    // Rounded: repeated steps of 0.05 and 0.1 must reach 0 exactly.
    this.shedShare = Math.round(this.shedShare * 100) / 100;
    shareGauge.set(this.shedShare);
    if (before === 0 && this.shedShare > 0)
      this.o.log.warn(
        { delay_ms: Math.round(delayMs), bound_ms: this.o.maxDelayMs, utilization, inflight: this.inflight },
        'ingest overloaded: shedding load (503 with Retry-After)',
      );
    else if (before > 0 && this.shedShare === 0) this.o.log.info({}, 'ingest no longer shedding load');
  }

  /**
   * Admits one request, or throws the 503 that refuses it. The caller must call the returned function once the
   * request is answered.
   */
  admit(): () => void {
    let reason: 'inflight' | 'delay' | undefined;
    if (this.inflight >= this.o.maxInflight) reason = 'inflight';
    else if (this.shedShare > 0 && this.random() < this.shedShare) reason = 'delay';
    if (reason) {
      shed.inc({ reason });
      this.noteRefused(reason);
      throw refusal(reason, Math.max(1, Math.ceil(this.shedShare * 5)));
    }
    this.inflight++;
    inflightGauge.set(this.inflight);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inflight--;
      inflightGauge.set(this.inflight);
    };
  }

  private noteRefused(reason: string): void {
    this.refusedSinceLog++;
    const t = this.now();
    if (t - this.lastLogAt < LOG_EVERY_MS) return;
    this.o.log.warn(
      { refused: this.refusedSinceLog, reason, share: this.shedShare, inflight: this.inflight },
      'ingest shedding load',
    );
    this.lastLogAt = t;
    this.refusedSinceLog = 0;
  }

  stop(): void {
    clearInterval(this.timer);
    this.histogram?.disable();
  }
}
