import type { z } from 'zod';
import { safeDecode } from '../contracts/codec.ts';
import { isRetriable } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { BusConsumer, BusMessage } from './bus.ts';

export interface Delivered<T> {
  value: T;
  msg: BusMessage;
}

/**
 * What one attempt at a batch came to (PostHog's pipeline results): `ok` committed; `unavailable` failed because a
 * backing service is unreachable, which says nothing about the messages; `failed` failed on the messages' content.
 */
export type BatchOutcome = { kind: 'ok' } | { kind: 'unavailable'; err: unknown } | { kind: 'failed'; err: unknown };

export interface BatchLoopOptions<T> {
  consumer: BusConsumer;
  schema: z.ZodType<T>;
  batchMessages: number;
  fetchExpiresMs: number;
  /** How long a batch takes what arrives after its first message (BusConsumer.fetch); the bus's default when unset. */
  batchWindowMs?: number;
  signal: AbortSignal;
  log: Logger;
  /** Applies one batch in ONE transaction. Must be idempotent: redelivery is normal, not an error. */
  handle(items: readonly Delivered<T>[]): Promise<void>;
  /** Stores a message that will never be processed (poison). Must throw if the row was not stored. */
  deadLetter(msg: BusMessage, reason: string): Promise<void>;
  /** Resolves true when the backing services answer again (for example `select 1`); false or a throw: still down. */
  probe(): Promise<boolean>;
  /** Called on every pause and resume, for metrics and tests. */
  onPause?: (paused: boolean) => void;
  /** Backoff bounds while a backing service is down (defaults 250 ms doubling to 10 s). */
  pauseMinMs?: number;
  pauseMaxMs?: number;
}

/**
 * How many times a batch may fail with an infrastructure-looking error while the probe says the database answers,
 * before the loop stops trusting the classification and isolates the batch message by message. A deadlock or a
 * statement timeout that one message causes every time must not stall its partition forever.
 */
const HEALTHY_RETRIES = 3;

/**
 * Pull, decode, handle, ack: the consumer loop every processor partition runs.
 * - a batch is acked only after `handle` committed;
 * - infrastructure failures (database unreachable) pause fetching and retry the same messages until the probe
 *   answers, without naking them, so no delivery is spent and no message is ever dropped for its delivery count;
 * - content failures re-run the batch one message at a time; a message that fails alone is poison: its dead-letter
 *   row is stored first (retried through outages like any write), then it is terminated;
 * - undecodable messages are poison at once.
 * Resolves when `signal` aborts, after the in-flight batch finished or was handed back (nak) for redelivery.
 */
export async function runBatchLoop<T>(o: BatchLoopOptions<T>): Promise<void> {
  try {
    await pullUntilAborted(o);
  } finally {
    // What the client pulled but no batch took goes back now: a processor that stops (a deploy, a rebalance) does not
    // hold its partition's next messages for the ack wait.
    await o.consumer.close().catch(() => {});
  }
}

async function pullUntilAborted<T>(o: BatchLoopOptions<T>): Promise<void> {
  const pause = new Pauser(o);
  while (!o.signal.aborted) {
    let msgs: BusMessage[];
    try {
      msgs = await o.consumer.fetch(o.batchMessages, o.fetchExpiresMs, o.batchWindowMs);
    } catch (err) {
      if (o.signal.aborted) break;
      o.log.warn({ err: (err as Error).message, consumer: o.consumer.name }, 'fetch failed; retrying');
      await sleep(1000, o.signal);
      continue;
    }
    if (msgs.length === 0) continue;
    const good: Delivered<T>[] = [];
    for (const msg of msgs) {
      const r = safeDecode(o.schema, msg.data);
      if (r.ok) good.push({ value: r.value, msg });
      else if (!(await poison(o, pause, msg, `undecodable: ${r.error}`))) {
        handBack(msgs);
        return;
      }
    }
    if (good.length === 0) continue;
    const started = performance.now();
    const r = await settle(o, pause, good);
    if (r === 'aborted') return;
    o.log.debug({ consumer: o.consumer.name, messages: good.length, ms: Math.round(performance.now() - started), outcome: r }, 'batch');
  }
}

/** Runs `handle` once and classifies the result. */
async function attempt<T>(o: BatchLoopOptions<T>, items: readonly Delivered<T>[]): Promise<BatchOutcome> {
  try {
    await o.handle(items);
    return { kind: 'ok' };
  } catch (err) {
    return isRetriable(err) ? { kind: 'unavailable', err } : { kind: 'failed', err };
  }
}

/**
 * Brings a batch to an end: committed and acked, or split until every poison message is dead-lettered and
 * terminated. Returns 'aborted' when shutdown interrupted a pause (the unsettled messages were nak'd).
 */
async function settle<T>(o: BatchLoopOptions<T>, pause: Pauser<T>, items: readonly Delivered<T>[]): Promise<'ok' | 'isolated' | 'aborted'> {
  let healthyFailures = 0;
  for (;;) {
    const r = await attempt(o, items);
    if (r.kind === 'ok') {
      for (const { msg } of items) msg.ack(); // NOTE: only after the commit
      return 'ok';
    }
    if (r.kind === 'unavailable') {
      o.log.warn({ err: (r.err as Error).message, consumer: o.consumer.name, messages: items.length }, 'backing service unavailable; pausing');
      const wasDown = await pause.untilHealthy(items.map((i) => i.msg), r.err);
      if (wasDown === 'aborted') return handBack(items.map((i) => i.msg));
      // The probe answered at once: the database is up, yet the batch failed as if it were not (deadlock, timeout).
      if (wasDown === 'was-up' && ++healthyFailures >= HEALTHY_RETRIES) {
        o.log.error({ err: r.err, consumer: o.consumer.name }, 'batch keeps failing while the database answers; isolating');
        break;
      }
      continue;
    }
    o.log.error({ err: r.err, consumer: o.consumer.name, messages: items.length }, 'batch failed on its content; isolating the culprit');
    if (items.length === 1) return (await poison(o, pause, items[0].msg, `failed: ${(r.err as Error)?.message ?? String(r.err)}`)) ? 'isolated' : handBack([items[0].msg]);
    break;
  }
  if (items.length === 1) return (await poison(o, pause, items[0].msg, 'failed repeatedly while the database answered')) ? 'isolated' : handBack([items[0].msg]);
  for (let i = 0; i < items.length; i++) {
    if ((await settle(o, pause, [items[i]])) === 'aborted') return handBack(items.slice(i + 1).map((x) => x.msg));
  }
  return 'isolated';
}

/** Stores the dead-letter row (through any outage), then terminates. False when shutdown came first. */
async function poison<T>(o: BatchLoopOptions<T>, pause: Pauser<T>, msg: BusMessage, reason: string): Promise<boolean> {
  for (;;) {
    try {
      await o.deadLetter(msg, reason);
      msg.term(reason.slice(0, 200));
      o.log.warn({ consumer: o.consumer.name, seq: msg.seq, reason: reason.slice(0, 500) }, 'message dead-lettered');
      return true;
    } catch (err) {
      o.log.warn({ err: (err as Error).message, consumer: o.consumer.name, seq: msg.seq }, 'dead-letter insert failed; retrying');
      if ((await pause.untilHealthy([msg], err)) === 'aborted') return false;
    }
  }
}

/** Shutdown during a pause: give the messages back for immediate redelivery (to this or another processor). */
function handBack(msgs: readonly BusMessage[]): 'aborted' {
  for (const m of msgs) m.nak(0);
  return 'aborted';
}

/** Waits for the backing services with backoff, keeping held messages from being redelivered meanwhile. */
class Pauser<T> {
  private readonly o: BatchLoopOptions<T>;
  constructor(o: BatchLoopOptions<T>) {
    this.o = o;
  }

  /** 'was-up' when the first probe already answered (the failure was not an outage). */
  async untilHealthy(held: readonly BusMessage[], cause: unknown): Promise<'was-up' | 'recovered' | 'aborted'> {
    const { o } = this;
    let delay = o.pauseMinMs ?? 250;
    const max = o.pauseMaxMs ?? 10_000;
    let probes = 0;
    let paused = false;
    const since = Date.now();
    // NOTE: `working` restarts the ack timer, so held messages are neither redelivered nor charged a delivery
    // however long the outage lasts (a probe alone may take the pool's connection timeout).
    const keepAlive = () => {
      for (const m of held) m.working();
    };
    keepAlive();
    const heartbeat = setInterval(keepAlive, 500);
    try {
      for (;;) {
        if (!(await sleep(probes === 0 ? Math.min(delay, 100) : delay, o.signal))) return 'aborted';
        const up = await o.probe().catch(() => false);
        probes++;
        if (up) {
          if (paused) o.log.info({ consumer: o.consumer.name, pausedMs: Date.now() - since }, 'backing service answers again; resuming');
          return probes === 1 ? 'was-up' : 'recovered';
        }
        if (!paused) {
          paused = true;
          o.onPause?.(true);
          o.log.warn({ consumer: o.consumer.name, err: (cause as Error)?.message }, 'paused: backing service unreachable');
        }
        if (probes > 1) delay = Math.min(max, delay * 2);
      }
    } finally {
      clearInterval(heartbeat);
      if (paused) o.onPause?.(false);
    }
  }
}

/** Sleeps `ms`; false when `signal` aborted first. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve(!signal.aborted);
    };
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
