import type { z } from 'zod';
import { safeDecode } from '../contracts/codec.ts';
import { isRetriable } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { BusConsumer, BusMessage } from './bus.ts';

export interface Delivered<T> {
  value: T;
  msg: BusMessage;
}

export interface BatchLoopOptions<T> {
  consumer: BusConsumer;
  schema: z.ZodType<T>;
  batchMessages: number;
  fetchExpiresMs: number;
  maxDeliver: number;
  signal: AbortSignal;
  log: Logger;
  /** Applies one batch in ONE transaction. Must be idempotent: redelivery is normal, not an error. */
  handle(items: readonly Delivered<T>[]): Promise<void>;
  /** Records a message that will never be processed (poison, or out of deliveries). */
  deadLetter(msg: BusMessage, reason: string): Promise<void>;
}

/** Redelivery delay after a transient failure: 0.5 s doubling to 30 s. */
export const backoffMs = (deliveryCount: number): number => Math.min(30_000, 500 * 2 ** Math.max(0, deliveryCount - 1));

/**
 * Pull, decode, handle, ack: the consumer loop every processor partition runs.
 * - undecodable messages are dead-lettered and terminated (never retried);
 * - a batch is acked only after `handle` committed;
 * - a transient failure naks the batch with backoff; a permanent one re-runs the batch one message at a
 *   time so only the culprit is dead-lettered.
 * Resolves when `signal` aborts, after the in-flight batch finished.
 */
export async function runBatchLoop<T>(o: BatchLoopOptions<T>): Promise<void> {
  while (!o.signal.aborted) {
    let msgs: BusMessage[];
    try {
      msgs = await o.consumer.fetch(o.batchMessages, o.fetchExpiresMs);
    } catch (err) {
      if (o.signal.aborted) break;
      o.log.warn({ err: (err as Error).message, consumer: o.consumer.name }, 'fetch failed; retrying');
      await sleep(1000);
      continue;
    }
    if (msgs.length === 0) continue;
    const good: Delivered<T>[] = [];
    for (const msg of msgs) {
      const r = safeDecode(o.schema, msg.data);
      if (r.ok) good.push({ value: r.value, msg });
      else {
        await o.deadLetter(msg, `poison: ${r.error}`);
        msg.term(r.error);
      }
    }
    if (good.length === 0) continue;
    const started = performance.now();
    try {
      await o.handle(good);
      for (const { msg } of good) msg.ack(); // NOTE: only after the commit
      o.log.debug({ consumer: o.consumer.name, messages: good.length, ms: Math.round(performance.now() - started) }, 'batch');
    } catch (err) {
      if (isRetriable(err)) {
        o.log.warn({ err: (err as Error).message, consumer: o.consumer.name, messages: good.length }, 'batch failed; will retry');
        for (const { msg } of good) retryOrDeadLetter(o, msg, (err as Error).message);
        await sleep(250);
      } else {
        o.log.error({ err, consumer: o.consumer.name }, 'batch failed permanently; isolating the culprit');
        await isolate(o, good);
      }
    }
  }
}

function retryOrDeadLetter<T>(o: BatchLoopOptions<T>, msg: BusMessage, reason: string): void {
  if (msg.deliveryCount >= o.maxDeliver) {
    void o.deadLetter(msg, `gave up after ${msg.deliveryCount} deliveries: ${reason}`).finally(() => msg.term(reason));
  } else msg.nak(backoffMs(msg.deliveryCount));
}

async function isolate<T>(o: BatchLoopOptions<T>, items: readonly Delivered<T>[]): Promise<void> {
  for (const item of items) {
    try {
      await o.handle([item]);
      item.msg.ack();
    } catch (err) {
      if (isRetriable(err)) retryOrDeadLetter(o, item.msg, (err as Error).message);
      else {
        await o.deadLetter(item.msg, `failed: ${(err as Error).message}`);
        item.msg.term((err as Error).message);
      }
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
