/**
 * The pure parts of the open-loop benches: when a batch is due, what each window of a run measured, and the verdicts
 * printed beside the figures. No clocks or sockets here: the sender (load.ts) feeds them times and answers, so the
 * logic is tested without timing (open-loop.test.ts).
 */

/** The p-th percentile (nearest rank) of `values`; 0 for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/**
 * An open-loop schedule in events per second: a batch is due while fewer events have been offered than the elapsed
 * time asks for, whatever the server has answered. Batches vary in size (the SDK's 1-10 events), so the schedule
 * counts events, not requests: a run of small batches sends more requests, as real sites do.
 */
export class OpenLoopSchedule {
  readonly eventsPerSecond: number;
  private offered = 0;
  private batches = 0;

  constructor(eventsPerSecond: number) {
    if (!(eventsPerSecond > 0) || !Number.isFinite(eventsPerSecond))
      throw new RangeError(`rate must be a positive number of events/s, got ${eventsPerSecond}`);
    this.eventsPerSecond = eventsPerSecond;
  }

  /** Whether the next batch is due `elapsedSeconds` after the start. */
  due(elapsedSeconds: number): boolean {
    return this.offered < elapsedSeconds * this.eventsPerSecond;
  }

  /** Seconds after the start at which the next batch fell due: the sender is late by `now - nextDueAt()`. */
  nextDueAt(): number {
    return this.offered / this.eventsPerSecond;
  }

  /** Records a batch as offered: sent, or counted as not sent (the schedule does not wait for either). */
  offer(events: number): void {
    this.offered += events;
    this.batches++;
  }

  get offeredEvents(): number {
    return this.offered;
  }

  get offeredBatches(): number {
    return this.batches;
  }
}

/** What one window of a run saw: offered and latencies by send time, accepted events by answer time. */
export interface Window {
  offeredEvents: number;
  acceptedEvents: number;
  latenciesMs: number[];
  /** Score lags of the probes sent in this window. */
  lagsMs: number[];
}

/** Windows of `seconds` each, from a run's start; a time past the last window opens the next ones. */
export class WindowSet {
  readonly seconds: number;
  readonly list: Window[] = [];

  constructor(seconds: number) {
    if (!(seconds > 0)) throw new RangeError(`window must be positive, got ${seconds}`);
    this.seconds = seconds;
  }

  /** The window holding `elapsedSeconds` after the start (negative times belong to the first). */
  at(elapsedSeconds: number): Window {
    const i = Math.max(0, Math.floor(elapsedSeconds / this.seconds));
    while (this.list.length <= i) this.list.push({ offeredEvents: 0, acceptedEvents: 0, latenciesMs: [], lagsMs: [] });
    return this.list[i]!;
  }

  /** Accepted events over every window so far: the ingest side of the backlog. */
  acceptedEvents(): number {
    return this.list.reduce((n, w) => n + w.acceptedEvents, 0);
  }
}

/** A reading of the processor's committed-events counter and of the accepted count, taken at the same moment. */
export interface Sample {
  elapsedSeconds: number;
  /** Events committed since the run started. */
  stored: number;
  /** Events answered 202 since the run started. */
  accepted: number;
}

export interface WindowRow {
  fromSeconds: number;
  toSeconds: number;
  offeredRate: number;
  acceptedRate: number;
  storedRate: number;
  /** Accepted but not yet committed at the window's end. */
  backlog: number;
  latencyP50: number;
  latencyP99: number;
  lagP50: number | undefined;
  lagP99: number | undefined;
  probes: number;
}

/**
 * One row per sample interval: the samples are taken at the windows' ends (a busy machine fires the timer late, so
 * each row uses the interval actually measured between its two samples, not the nominal window).
 */
export function windowRows(windows: WindowSet, samples: readonly Sample[]): WindowRow[] {
  const rows: WindowRow[] = [];
  let prev: Sample = { elapsedSeconds: 0, stored: 0, accepted: 0 };
  for (const [i, s] of samples.entries()) {
    const w = windows.list[i] ?? { offeredEvents: 0, acceptedEvents: 0, latenciesMs: [], lagsMs: [] };
    const secs = Math.max(1e-9, s.elapsedSeconds - prev.elapsedSeconds);
    rows.push({
      fromSeconds: prev.elapsedSeconds,
      toSeconds: s.elapsedSeconds,
      // Offered by the schedule over the window's nominal span (the last may be shorter), not the late sample's.
      offeredRate: w.offeredEvents / Math.max(1e-9, Math.min(windows.seconds, s.elapsedSeconds - i * windows.seconds)),
      acceptedRate: (s.accepted - prev.accepted) / secs,
      storedRate: (s.stored - prev.stored) / secs,
      backlog: s.accepted - s.stored,
      latencyP50: percentile(w.latenciesMs, 50),
      latencyP99: percentile(w.latenciesMs, 99),
      lagP50: w.lagsMs.length ? percentile(w.lagsMs, 50) : undefined,
      lagP99: w.lagsMs.length ? percentile(w.lagsMs, 99) : undefined,
      probes: w.lagsMs.length,
    });
    prev = s;
  }
  return rows;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

/** A sender later than this on some batch says so even when the server was the limit: both may hold. */
const LATE_NOTE_MS = 100;

/** Whether an open-loop sender reached its target, and if not, why (the reasons a sender can see). */
export function rateVerdict(o: {
  targetRate: number;
  achievedRate: number;
  droppedBatches: number;
  failedBatches: number;
  maxInFlight: number;
  /** The latest the sender sent a batch after it fell due, ms. */
  maxLateMs: number;
  /** The bench process's CPU over the sending span, as a share of one core (a sender near 1.0 may be the limit). */
  senderCoreShare?: number;
  /** Share of the target that counts as reached (default 0.95: a few percent is the answers still in flight). */
  tolerance?: number;
}): { reached: boolean; ratio: number; text: string } {
  const ratio = o.achievedRate / o.targetRate;
  const reached = ratio >= (o.tolerance ?? 0.95) && o.droppedBatches === 0 && o.failedBatches === 0;
  const head = `${fmt(o.achievedRate)} of ${fmt(o.targetRate)} events/s accepted (${ratio.toFixed(2)})`;
  if (reached) return { reached, ratio, text: `reached: ${head}` };
  const why: string[] = [];
  if (o.droppedBatches > 0)
    why.push(
      `${fmt(o.droppedBatches)} batches not sent because ${o.maxInFlight} requests were in flight (the server answered too slowly)`,
    );
  if (o.failedBatches > 0) why.push(`${fmt(o.failedBatches)} requests failed`);
  // Neither: the bench process itself could not keep its schedule (its event loop starved of CPU).
  if (why.length === 0)
    why.push(
      `the sender fell behind its own schedule (up to ${fmt(o.maxLateMs)} ms late): the bench process was short of CPU`,
    );
  else if (o.maxLateMs >= LATE_NOTE_MS) why.push(`the sender itself was up to ${fmt(o.maxLateMs)} ms late`);
  if (o.senderCoreShare !== undefined) why.push(`sender used ${(o.senderCoreShare * 100).toFixed(0)} % of a core`);
  return { reached, ratio, text: `NOT reached: ${head}; ${why.join('; ')}` };
}

/**
 * Whether the backlog stayed bounded: at the end of sending, what ingest accepted and the processor had not committed
 * is at most `boundSeconds` of traffic at the rate accepted. A processor that keeps up ends within its batching delay;
 * one that does not ends with a backlog that grew all run.
 */
export function backlogVerdict(o: {
  finalBacklog: number;
  acceptedRate: number;
  boundSeconds: number;
  maxBacklog: number;
}): { bounded: boolean; seconds: number; text: string } {
  const seconds =
    o.acceptedRate > 0 ? o.finalBacklog / o.acceptedRate : o.finalBacklog > 0 ? Number.POSITIVE_INFINITY : 0;
  const bounded = seconds <= o.boundSeconds;
  const text = `${bounded ? 'bounded' : 'NOT bounded'}: ${fmt(o.finalBacklog)} events behind at the end (${seconds.toFixed(1)} s of traffic, bound ${o.boundSeconds} s), at most ${fmt(o.maxBacklog)} during the run`;
  return { bounded, seconds, text };
}

/** One target line: `target: … measured: … ratio … met|not met|not judged (why)`. */
export function targetLine(o: {
  target: string;
  measured: string;
  ratio?: number;
  met: boolean | undefined;
  why?: string;
}): string {
  const ratio = o.ratio === undefined || !Number.isFinite(o.ratio) ? '' : `  ratio ${o.ratio.toFixed(2)}`;
  const verdict =
    o.met === undefined
      ? `not judged${o.why ? ` (${o.why})` : ''}`
      : o.met
        ? 'met'
        : `not met${o.why ? ` (${o.why})` : ''}`;
  return `target: ${o.target}  measured: ${o.measured}${ratio}  ${verdict}`;
}

/** What an open-loop sender recorded per request, ms after the run's start (shed-sender.ts fills them). */
export interface SendColumns {
  /** When the request fell due: its latency counts from here. */
  scheduled: Float64Array;
  /** When the sender thread issued it (later than `scheduled` when the sender fell behind). */
  issued: Float64Array;
  /** When it got a connection (later than `issued` when every connection was busy with an earlier request). */
  socket: Float64Array;
  answered: Float64Array;
  /** HTTP status, 0 for a network error. */
  status: Int16Array;
  /** 1 when the answer carried Retry-After. */
  retryAfter: Uint8Array;
}

export interface SendSummary {
  requests: number;
  targetRate: number;
  /** Requests issued per second, from the first falling due to the last issued. */
  achievedRate: number;
  /** The sender's own lateness, issued - scheduled: p99 and most, ms. */
  senderLateP99: number;
  senderLateMax: number;
  /** Waiting for a free connection, socket - issued, p99 ms (the server answering slower than connections allow). */
  connectionWaitP99: number;
  accepted: number;
  /** 429 and 503 answers, and how many of them had no Retry-After. */
  refused: number;
  refusedWithoutRetryAfter: number;
  /** Anything else (network errors as status 0), by status. */
  other: Map<number, number>;
  /** Accepted requests' latency from their scheduled send time, ms. */
  acceptedP50: number;
  acceptedP99: number;
  /** The same, of requests that fell due in the last third of the run (a latency still growing shows here). */
  acceptedP99LastThird: number;
  /** Accepted requests' time from being issued to the answer (the sender's lateness left out), p99 ms. */
  acceptedServerP99: number;
}

/** One summary of every sender thread's columns, for a run of `seconds` at `targetRate` requests/s in all. */
export function summarizeSends(parts: readonly SendColumns[], targetRate: number, seconds: number): SendSummary {
  const late: number[] = [];
  const wait: number[] = [];
  const acc: number[] = [];
  const accLast: number[] = [];
  const accServer: number[] = [];
  const other = new Map<number, number>();
  let accepted = 0;
  let refused = 0;
  let refusedWithoutRetryAfter = 0;
  let firstDue = Number.POSITIVE_INFINITY;
  let lastIssued = 0;
  let requests = 0;
  for (const p of parts) {
    for (let i = 0; i < p.status.length; i++) {
      requests++;
      const due = p.scheduled[i]!;
      firstDue = Math.min(firstDue, due);
      lastIssued = Math.max(lastIssued, p.issued[i]!);
      late.push(p.issued[i]! - due);
      // A request that failed before it had a connection has no socket time.
      if (p.socket[i]! >= p.issued[i]!) wait.push(p.socket[i]! - p.issued[i]!);
      const status = p.status[i]!;
      if (status === 202) {
        accepted++;
        const ms = p.answered[i]! - due;
        acc.push(ms);
        if (due >= (seconds * 1000 * 2) / 3) accLast.push(ms);
        accServer.push(p.answered[i]! - p.issued[i]!);
      } else if (status === 429 || status === 503) {
        refused++;
        if (!p.retryAfter[i]) refusedWithoutRetryAfter++;
      } else other.set(status, (other.get(status) ?? 0) + 1);
    }
  }
  // One request's worth of time added: n requests at rate r span (n - 1) / r from the first to the last.
  const span = requests ? (lastIssued - firstDue) / 1000 + 1 / targetRate : 1;
  return {
    requests,
    targetRate,
    achievedRate: requests / span,
    senderLateP99: percentile(late, 99),
    senderLateMax: late.reduce((m, v) => Math.max(m, v), 0),
    connectionWaitP99: percentile(wait, 99),
    accepted,
    refused,
    refusedWithoutRetryAfter,
    other,
    acceptedP50: percentile(acc, 50),
    acceptedP99: percentile(acc, 99),
    acceptedP99LastThird: percentile(accLast, 99),
    acceptedServerP99: percentile(accServer, 99),
  };
}
