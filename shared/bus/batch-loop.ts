import type { z } from 'zod';
import { safeDecode } from '../contracts/codec.ts';
import { failureCause } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { BusConsumer, BusMessage } from './bus.ts';

export interface Delivered<T> {
  value: T;
  msg: BusMessage;
}

/**
 * What one attempt at a batch came to (PostHog's pipeline results): `ok` committed; `unavailable` failed because a
 * backing service is unreachable, which says nothing about the messages; `environment` failed because the schema or
 * the permissions are not what the code expects (see isEnvironmentFault), which says nothing about them either;
 * `failed` may be the messages' own fault.
 */
export type BatchOutcome =
  | { kind: 'ok' }
  | { kind: 'unavailable'; err: unknown }
  | { kind: 'environment'; err: unknown }
  | { kind: 'failed'; err: unknown };

/** A partition paused for a reason that is not a message's (`paused`), or going again (`resumed`). */
export type PartitionHealth = { state: 'paused'; reason: string } | { state: 'resumed' };

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
  /**
   * Called when the partition pauses on something no message causes (a schema or permission fault, the poison
   * circuit breaker) and when it goes again: the roles record it as a degradation event.
   */
  onHealth?: (h: PartitionHealth) => void;
  /** Messages in a row that may fail alone and be dead-lettered before the circuit breaker pauses the partition (default 3). */
  poisonBreaker?: number;
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

/** Default of BatchLoopOptions.poisonBreaker. */
const POISON_BREAKER = 3;

/**
 * Pull, decode, handle, ack: the consumer loop every processor partition runs.
 * - a batch is acked only after `handle` committed;
 * - infrastructure failures (database unreachable) pause fetching and retry the same messages until the probe
 *   answers, without naking them, so no delivery is spent and no message is ever dropped for its delivery count;
 * - environment failures (an undefined column because the migration did not run, a missing privilege, a lock not
 *   granted) pause the partition and retry the same messages with backoff until they go through: no message is
 *   isolated or dead-lettered for them, and `onHealth` reports the pause;
 * - other failures re-run the batch one message at a time; a message that fails alone is poison: its dead-letter
 *   row is stored first (retried through outages like any write), then it is terminated;
 * - the poison circuit breaker: after `poisonBreaker` messages in a row failed alone (no message went through in
 *   between), the next one that fails alone is held instead, and the partition pauses (`onHealth`) retrying the held
 *   messages with backoff. A held message goes through (the fault is gone: the breaker closes) or fails while
 *   another one goes through (the partition is healthy: it was poison after all, and is dead-lettered). A fault
 *   that hits every message therefore dead-letters at most `poisonBreaker` of them, never the stream;
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

/** What one partition's loop remembers between batches. */
class PartitionState<T> {
  readonly o: BatchLoopOptions<T>;
  readonly pause: Pauser<T>;
  /** Messages that failed alone since a message last went through. */
  poisonStreak = 0;
  /** Why the partition is paused; '' at start: a pause recorded by an earlier run is closed by the first commit. */
  private pausedFor: string | undefined = '';
  constructor(o: BatchLoopOptions<T>) {
    this.o = o;
    this.pause = new Pauser(o);
  }

  get breakerLimit(): number {
    return this.o.poisonBreaker ?? POISON_BREAKER;
  }

  /** A batch went through: the partition is healthy. */
  wentThrough(): void {
    this.poisonStreak = 0;
    if (this.pausedFor === undefined) return;
    if (this.pausedFor !== '')
      this.o.log.info({ consumer: this.o.consumer.name }, 'partition resumed: messages go through again');
    this.pausedFor = undefined;
    this.o.onHealth?.({ state: 'resumed' });
  }

  /** The partition pauses on something that is not a message's fault; reported once per pause. */
  paused(reason: string): void {
    if (this.pausedFor !== undefined && this.pausedFor !== '') return;
    this.pausedFor = reason;
    this.o.log.error({ consumer: this.o.consumer.name, reason }, 'partition paused');
    this.o.onHealth?.({ state: 'paused', reason });
  }
}

async function pullUntilAborted<T>(o: BatchLoopOptions<T>): Promise<void> {
  const p = new PartitionState(o);
  while (!o.signal.aborted) {
    let msgs: BusMessage[];
    try {
      msgs = await o.consumer.fetch(o.batchMessages, o.fetchExpiresMs, o.batchWindowMs);
    } catch (err) {
      if (o.signal.aborted) break;
      o.log.warn({ err, consumer: o.consumer.name }, 'fetch failed; retrying');
      await sleep(1000, o.signal);
      continue;
    }
    if (msgs.length === 0) continue;
    const good: Delivered<T>[] = [];
    for (const msg of msgs) {
      const r = safeDecode(o.schema, msg.data);
      if (r.ok) good.push({ value: r.value, msg });
      else if (!(await poison(p, msg, `undecodable: ${r.error}`))) {
        handBack(msgs);
        return;
      }
    }
    if (good.length === 0) continue;
    const started = performance.now();
    const r = await settle(p, good);
    if (r === 'aborted') return;
    o.log.debug(
      { consumer: o.consumer.name, messages: good.length, ms: Math.round(performance.now() - started), outcome: r },
      'batch',
    );
  }
}

/** Runs `handle` once and classifies the result by its cause. */
async function attempt<T>(o: BatchLoopOptions<T>, items: readonly Delivered<T>[]): Promise<BatchOutcome> {
  try {
    await o.handle(items);
    return { kind: 'ok' };
  } catch (err) {
    const cause = failureCause(err);
    return cause === 'content' ? { kind: 'failed', err } : { kind: cause, err };
  }
}

const messageOf = (err: unknown): string => (err as Error)?.message ?? String(err);

/**
 * Retries `items` through outages and environment faults until they commit ('ok', acked), shutdown comes
 * ('aborted', nothing acked or handed back yet), or they fail in a way a message may cause (the reason).
 */
async function untilSettled<T>(
  p: PartitionState<T>,
  items: readonly Delivered<T>[],
): Promise<'ok' | 'aborted' | { failed: string }> {
  const { o } = p;
  const held = items.map((i) => i.msg);
  let healthyFailures = 0;
  let environmentPauses = 0;
  for (;;) {
    const r = await attempt(o, items);
    if (r.kind === 'ok') {
      for (const m of held) m.ack(); // NOTE: only after the commit
      p.wentThrough();
      return 'ok';
    }
    if (r.kind === 'environment') {
      p.paused(
        `the database rejects the processor's statements (${messageOf(r.err)}): the schema or the permissions do not match this build; run \`friction migrate\` or fix the grants, and the partition resumes by itself`,
      );
      if (!(await p.pause.hold(held, environmentPauses++))) return 'aborted';
      continue;
    }
    if (r.kind === 'unavailable') {
      o.log.warn(
        { err: r.err, consumer: o.consumer.name, messages: items.length },
        'backing service unavailable; pausing',
      );
      const wasDown = await p.pause.untilHealthy(held, r.err);
      if (wasDown === 'aborted') return 'aborted';
      // The probe answered at once: the database is up, yet the batch failed as if it were not (deadlock, timeout).
      if (wasDown === 'was-up' && ++healthyFailures >= HEALTHY_RETRIES) {
        o.log.error(
          { err: r.err, consumer: o.consumer.name },
          'batch keeps failing while the database answers; isolating',
        );
        return { failed: 'failed repeatedly while the database answered' };
      }
      continue;
    }
    return { failed: `failed: ${messageOf(r.err)}` };
  }
}

/**
 * Brings a batch to an end: committed and acked, or split until every poison message is dead-lettered and
 * terminated. Returns 'aborted' when shutdown interrupted a pause (the unsettled messages were nak'd).
 */
async function settle<T>(p: PartitionState<T>, items: readonly Delivered<T>[]): Promise<'ok' | 'isolated' | 'aborted'> {
  const r = await untilSettled(p, items);
  if (r === 'aborted') return handBack(items.map((i) => i.msg));
  if (r === 'ok') return 'ok';
  if (items.length > 1)
    p.o.log.error(
      { consumer: p.o.consumer.name, messages: items.length, reason: r.failed },
      'batch failed on its content; isolating the culprit',
    );
  return isolate(p, items, items.length === 1 ? r.failed : undefined);
}

/**
 * Runs each message alone. One that fails alone is dead-lettered while the poison streak is under the breaker's
 * limit; past it, it is held until another message proves the partition healthy (then it is poison) or it goes
 * through itself (then the fault was not its own).
 */
async function isolate<T>(
  p: PartitionState<T>,
  items: readonly Delivered<T>[],
  knownFailure: string | undefined,
): Promise<'isolated' | 'aborted'> {
  let held: { item: Delivered<T>; reason: string }[] = [];
  const heldMsgs = () => held.map((h) => h.item.msg);
  // A message went through: each held one runs alone once more (the fault may have been fixed before that success)
  // and is poison only if it fails again now that the partition is known to be healthy.
  const condemnHeld = async (): Promise<boolean> => {
    for (const [i, h] of held.entries()) {
      const r = await untilSettled(p, [h.item]);
      if (r === 'ok') continue;
      if (r === 'aborted' || !(await poison(p, h.item.msg, r.failed))) {
        handBack(held.slice(i).map((x) => x.item.msg));
        return false;
      }
    }
    held = [];
    return true;
  };
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    const r = i === 0 && knownFailure !== undefined ? { failed: knownFailure } : await untilSettled(p, [item]);
    if (r === 'aborted') return handBack([...heldMsgs(), ...items.slice(i).map((x) => x.msg)]);
    if (r === 'ok') {
      // This message went through alone: the partition is healthy, so what failed alone before it was its own fault.
      if (held.length > 0 && !(await condemnHeld())) return handBack(items.slice(i + 1).map((x) => x.msg));
      continue;
    }
    if (held.length === 0 && p.poisonStreak < p.breakerLimit) {
      p.poisonStreak++;
      if (!(await poison(p, item.msg, r.failed))) return handBack(items.slice(i).map((x) => x.msg));
      continue;
    }
    held.push({ item, reason: r.failed });
  }
  // Every message since the breaker opened failed alone: pause, and retry them until one goes through.
  for (let pauses = 0; held.length > 0; pauses++) {
    p.paused(
      `${p.poisonStreak + held.length} messages in a row failed alone (last: ${held[held.length - 1].reason}): circuit breaker open; they are held and retried instead of being dead-lettered`,
    );
    if (!(await p.pause.hold(heldMsgs(), pauses))) return handBack(heldMsgs());
    const still: typeof held = [];
    let wentThrough = false;
    for (const [i, h] of held.entries()) {
      const r = await untilSettled(p, [h.item]);
      if (r === 'aborted') return handBack([...still.map((x) => x.item.msg), ...held.slice(i).map((x) => x.item.msg)]);
      if (r === 'ok') wentThrough = true;
      else still.push({ item: h.item, reason: r.failed });
    }
    held = still;
    if (wentThrough && held.length > 0 && !(await condemnHeld())) return 'aborted';
  }
  return 'isolated';
}

/** Stores the dead-letter row (through any outage), then terminates. False when shutdown came first. */
async function poison<T>(p: PartitionState<T>, msg: BusMessage, reason: string): Promise<boolean> {
  const { o } = p;
  for (;;) {
    try {
      await o.deadLetter(msg, reason);
      msg.term(reason.slice(0, 200));
      o.log.warn({ consumer: o.consumer.name, seq: msg.seq, reason: reason.slice(0, 500) }, 'message dead-lettered');
      return true;
    } catch (err) {
      o.log.warn({ err, consumer: o.consumer.name, seq: msg.seq }, 'dead-letter insert failed; retrying');
      if ((await p.pause.untilHealthy([msg], err)) === 'aborted') return false;
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

  /**
   * Waits one backoff step (the `step`th pause in a row: min doubling to max) while keeping `held` from being
   * redelivered. False when shutdown came first.
   */
  async hold(held: readonly BusMessage[], step: number): Promise<boolean> {
    const { o } = this;
    const delay = Math.min(o.pauseMaxMs ?? 10_000, (o.pauseMinMs ?? 250) * 2 ** Math.min(step, 20));
    const keepAlive = () => {
      for (const m of held) m.working();
    };
    keepAlive();
    const heartbeat = setInterval(keepAlive, 500);
    try {
      return await sleep(delay, o.signal);
    } finally {
      clearInterval(heartbeat);
    }
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
          if (paused)
            o.log.info(
              { consumer: o.consumer.name, pausedMs: Date.now() - since },
              'backing service answers again; resuming',
            );
          return probes === 1 ? 'was-up' : 'recovered';
        }
        if (!paused) {
          paused = true;
          o.onPause?.(true);
          o.log.warn({ consumer: o.consumer.name, err: cause }, 'paused: backing service unreachable');
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
