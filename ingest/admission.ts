import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { AppError } from '../shared/errors.ts';
import { counter, gauge } from '../shared/http/metrics.ts';
import type { Logger } from '../shared/logger.ts';

/** How often the limit is adjusted to the latency of the requests it admitted. */
const STEP_MS = 100;
/** The limit never falls below this: a few requests always go through, and they are what shows overload has passed. */
const MIN_LIMIT = 4;
/** The limit a process starts with (at most INGEST_MAX_INFLIGHT): a burst at start-up cannot queue hundreds at once. */
const INITIAL_LIMIT = 64;
/** A decrease at most halves the limit in one step (a single sample far over the target must not empty it). */
const MAX_DECREASE = 0.5;
/** Growth per step while the limit was used and latency was under the target: 10 % (at least one request). */
const INCREASE = 0.1;
/** Latencies kept per step for its percentile; past it the newest are dropped (the percentile needs no more). */
const SAMPLES_PER_STEP = 2048;
/**
 * Event-loop utilization (share of the step spent running callbacks, not waiting for I/O) from which latency over the
 * target counts as this process's own overload. Below it the requests wait for something else (the stream, the
 * database, a machine that gives the process little CPU): refusing would not make them faster, and the limit only
 * bounds memory (it grows back to INGEST_MAX_INFLIGHT if requests need it).
 */
const BUSY_UTILIZATION = 0.85;
/** While shedding, one summary log line at most this often. */
const LOG_EVERY_MS = 10_000;

const shed = counter(
  'friction_ingest_shed_total',
  'Ingest requests refused with 503 and Retry-After before any work because the adaptive in-flight limit was reached',
  ['reason'],
);
const inflightGauge = gauge('friction_ingest_inflight', 'Ingest requests being served by this process');
const limitGauge = gauge(
  'friction_ingest_inflight_limit',
  'Ingest requests this process serves at once right now (adaptive: lowered while their latency is over INGEST_LATENCY_TARGET_MS)',
);
const shareGauge = gauge(
  'friction_ingest_shed_share',
  'Share of ingest requests refused over the last 100 ms control step (0-1)',
);

/**
 * The refusals, made once each: a refused request must cost next to nothing, and a new Error captures a stack trace
 * (measured: a third of the refusal's own CPU). They are read, never changed, by the error path.
 */
const refusals = new Map<number, AppError>();
function refusal(retryAfterSec: number): AppError {
  let err = refusals.get(retryAfterSec);
  if (!err) {
    err = new AppError('unavailable', 503, 'ingest is overloaded; retry after the Retry-After delay', {
      retryAfterSec,
      retriable: true,
      details: { reason: 'overloaded' },
    });
    refusals.set(retryAfterSec, err);
  }
  return err;
}

export interface ShedOptions {
  /** Requests served at once at most (INGEST_MAX_INFLIGHT): the adaptive limit's ceiling, and the fixed one with no target. */
  maxInflight: number;
  /**
   * Latency of admitted requests (ms, admission to answer: 90th percentile per 100 ms, or the oldest one still in
   * flight) the limit is kept under (INGEST_LATENCY_TARGET_MS); 0: the limit stays at `maxInflight`.
   */
  targetMs: number;
  log: Logger;
  now?: () => number;
  /** Whether the control steps run on a timer (default true; tests drive `step` themselves). */
  timer?: boolean;
}

/**
 * Load shedding for one ingest process by an adaptive in-flight limit: a request arriving while `limit` requests are
 * being served is answered 503 with Retry-After before its body is read, at a fraction of serving it
 * (docs/scale.md has the measured share). Why a limit on requests in flight, adjusted to their latency:
 * - an admitted request waits for the stream's acknowledgement, read by the same event loop as every new request, so
 *   when the process is short of CPU (or the stream or database is slow) its latency grows: that latency is the
 *   queue, measured where it forms, and every request's, not a timer's;
 * - by Little's law the requests served per second are at most `limit / latency`: lowering the limit while latency
 *   is over the target lowers the work admitted until the loop keeps up, and refusals are cheap enough that what is
 *   left over for them does not make it late again;
 * - each admitted request holds its body: the limit bounds memory whatever is offered.
 * Every 100 ms (the control step) the signal is the larger of the 90th percentile of the latencies of the requests
 * answered in the step and the age of the oldest request still in flight (a loop so far behind that nothing was
 * answered still shows). Over the target with the event loop busy 85 % of the step or more (its own work made the
 * requests slow, not the stream, the database or other processes on the machine) for the second step running (one
 * is a stall, a long collection), the limit becomes the most requests in flight during the step × target / signal
 * (× 0.5 at the least; never below MIN_LIMIT, never above the limit); otherwise, while the limit was nearly reached (80 %), it grows by
 * 10 %, up to `maxInflight` (requests slow for another reason need more in flight, and the ceiling still bounds
 * memory). A gradient controller in the family of TCP Vegas and Netflix's concurrency-limits, with the latency
 * target an operator can read instead of a minimum round trip (the stream's round trip varies with the machine's
 * load, and a target is what the p99 is judged against).
 * Retry-After is 1-5 s: 5 × the share refused over the last step, rounded up; the SDK keeps a refused batch and
 * sends it again after it. Nothing refused was accepted.
 */
export class LoadShedder {
  private readonly o: ShedOptions;
  private readonly now: () => number;
  private inflight = 0;
  private currentLimit: number;
  /** Start times of the requests in flight, by admission order (a Map iterates in insertion order: the first is the oldest). */
  private readonly started = new Map<number, number>();
  private nextId = 0;
  private readonly samples = new Float64Array(SAMPLES_PER_STEP);
  private sampleCount = 0;
  private peakInflight = 0;
  private overSteps = 0;
  private admittedInStep = 0;
  private refusedInStep = 0;
  private lastShare = 0;
  private retryAfterSec = 1;
  private timer: NodeJS.Timeout | undefined;
  private elu: EventLoopUtilization = performance.eventLoopUtilization();
  private refusedSinceLog = 0;
  private lastLogAt = Number.NEGATIVE_INFINITY;
  private shedding = false;

  constructor(o: ShedOptions) {
    this.o = o;
    this.now = o.now ?? (() => performance.now());
    this.currentLimit = o.targetMs > 0 ? Math.min(o.maxInflight, INITIAL_LIMIT) : o.maxInflight;
    limitGauge.set(this.currentLimit);
    if (o.targetMs > 0 && o.timer !== false) {
      this.timer = setInterval(() => this.step(), STEP_MS);
      this.timer.unref();
    }
  }

  /** Requests admitted at once right now. */
  get limit(): number {
    return this.currentLimit;
  }

  /** Share of the requests refused over the last control step. */
  get share(): number {
    return this.lastShare;
  }

  /**
   * One control step with what was measured since the last one (the timer calls it every 100 ms), and the event
   * loop's utilization over the step (measured when not given). Returns the latency signal it used (ms), for tests.
   */
  step(utilization = this.utilization()): number {
    const t = this.now();
    const answered = this.samples.subarray(0, this.sampleCount).sort();
    let signal = answered.length ? answered[Math.min(answered.length - 1, Math.floor(0.9 * answered.length))]! : 0;
    const oldest = this.started.values().next();
    if (!oldest.done) signal = Math.max(signal, t - oldest.value);
    const before = this.currentLimit;
    const target = this.o.targetMs;
    if (target > 0) {
      const ours = utilization >= BUSY_UTILIZATION;
      this.overSteps = signal > target && ours ? this.overSteps + 1 : 0;
      // One step over is a stall (a long collection), not overload: it must last a second step. Then the limit is
      // set from the requests actually in flight (Little's law: as many at the target latency as that many at the
      // signal's), so a limit far above what a slow process ever had in flight binds at once.
      if (this.overSteps >= 2) {
        const basis = Math.min(before, Math.max(1, this.peakInflight));
        this.currentLimit = Math.min(
          before,
          Math.max(MIN_LIMIT, Math.floor(basis * Math.max(MAX_DECREASE, target / signal))),
        );
      } else if (this.overSteps === 0 && this.peakInflight >= before * 0.8)
        this.currentLimit = Math.min(this.o.maxInflight, before + Math.max(1, Math.floor(before * INCREASE)));
    }
    const offered = this.admittedInStep + this.refusedInStep;
    this.lastShare = offered ? this.refusedInStep / offered : 0;
    this.retryAfterSec = Math.min(5, Math.max(1, Math.ceil(this.lastShare * 5)));
    limitGauge.set(this.currentLimit);
    shareGauge.set(this.lastShare);
    if (!this.shedding && this.refusedInStep > 0) {
      this.shedding = true;
      this.o.log.warn(
        { latency_ms: Math.round(signal), target_ms: target, limit: this.currentLimit, refused_share: this.lastShare },
        'ingest overloaded: shedding load (503 with Retry-After)',
      );
    } else if (this.shedding && this.refusedInStep === 0 && this.currentLimit >= before) {
      this.shedding = false;
      this.o.log.info({ limit: this.currentLimit }, 'ingest no longer shedding load');
    }
    this.sampleCount = 0;
    this.peakInflight = this.inflight;
    this.admittedInStep = 0;
    this.refusedInStep = 0;
    return signal;
  }

  private utilization(): number {
    const now = performance.eventLoopUtilization();
    const u = performance.eventLoopUtilization(now, this.elu).utilization;
    this.elu = now;
    return u;
  }

  /**
   * Admits one request, or throws the 503 that refuses it. The caller must call the returned function once the
   * request is answered.
   */
  admit(): () => void {
    if (this.inflight >= this.currentLimit) {
      this.refusedInStep++;
      shed.inc({ reason: 'limit' });
      this.noteRefused();
      throw refusal(this.retryAfterSec);
    }
    const id = this.nextId++;
    const t0 = this.now();
    this.started.set(id, t0);
    this.inflight++;
    this.admittedInStep++;
    if (this.inflight > this.peakInflight) this.peakInflight = this.inflight;
    inflightGauge.set(this.inflight);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.started.delete(id);
      this.inflight--;
      inflightGauge.set(this.inflight);
      if (this.sampleCount < SAMPLES_PER_STEP) this.samples[this.sampleCount++] = this.now() - t0;
    };
  }

  private noteRefused(): void {
    this.refusedSinceLog++;
    const t = this.now();
    if (t - this.lastLogAt < LOG_EVERY_MS) return;
    this.o.log.warn(
      { refused: this.refusedSinceLog, limit: this.currentLimit, inflight: this.inflight },
      'ingest shedding load',
    );
    this.lastLogAt = t;
    this.refusedSinceLog = 0;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
