import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  jetstream,
  jetstreamManager,
} from '@nats-io/jetstream';
import type { Consumer, ConsumerMessages, JetStreamClient, JetStreamManager, JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import { AppError, UnavailableError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { DEFAULT_BATCH_WINDOW_MS } from './bus.ts';
import type { Bus, BusConsumer, BusMessage, ConsumerLag, ConsumerSpec, PublishResult, StreamSpec } from './bus.ts';

/** How long ingest waits for the stream's PubAck before answering 503. */
const PUBLISH_TIMEOUT_MS = 3000;

const TIMEOUT = Symbol('timeout');
function within<T>(p: Promise<T>, ms: number): Promise<T | typeof TIMEOUT> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<typeof TIMEOUT>((r) => (timer = setTimeout(() => r(TIMEOUT), ms)))]).finally(() =>
    clearTimeout(timer),
  );
}

/**
 * How long each pull request the client keeps open lives on the server (nats.js renews them): also how long a
 * stopped consumer's last request may still take messages, which bounds the handback in `close`.
 */
const PULL_EXPIRES_MS = 5000;

/**
 * Batches over a continuous pull (`consume`): the client keeps up to `max` messages in flight, so a batch is
 * whatever has arrived within its window, instead of a fetch that waits for a full batch or its expiry.
 */
class ContinuousPull {
  private readonly consumer: Consumer;
  private readonly nc: NatsConnection;
  private readonly max: number;
  private messages: ConsumerMessages | undefined;
  private iter: AsyncIterator<JsMsg> | undefined;
  /** A next() that lost a race against the linger timer: its message belongs to the next batch. */
  private pendingNext: Promise<IteratorResult<JsMsg>> | undefined;

  constructor(consumer: Consumer, nc: NatsConnection, max: number) {
    this.consumer = consumer;
    this.nc = nc;
    this.max = max;
  }

  private next(): Promise<IteratorResult<JsMsg>> {
    this.pendingNext ??= this.iter!.next();
    return this.pendingNext;
  }

  /** See BusConsumer.fetch. Under a backlog the client's buffer is full and a batch fills at once. */
  async fetch(max: number, expiresMs: number, windowMs: number): Promise<JsMsg[]> {
    if (!this.messages) {
      this.messages = await this.consumer.consume({ max_messages: this.max, expires: PULL_EXPIRES_MS });
      this.iter = this.messages[Symbol.asyncIterator]();
    }
    const out: JsMsg[] = [];
    let wait = expiresMs;
    let closesAt = 0;
    while (out.length < max) {
      const r = await within(this.next(), wait);
      if (r === TIMEOUT) break;
      this.pendingNext = undefined;
      if (r.done) {
        this.messages = undefined;
        break;
      }
      out.push(r.value);
      if (out.length === 1) closesAt = performance.now() + windowMs;
      wait = Math.max(0, closesAt - performance.now());
    }
    return out;
  }

  /**
   * Stops pulling and hands back what the client holds that no fetch took. The server keeps routing to a stopped
   * pull until its request expires, so the messages come back once it has (PULL_EXPIRES_MS), to a live consumer of
   * the durable, instead of after the ack wait (30 s by default).
   */
  async close(): Promise<void> {
    const messages = this.messages;
    if (!messages) return;
    this.messages = undefined;
    // A round trip first: every message the server sent before it is then in the iterator's buffer. stop() unsubscribes
    // at once, and a message still on its way (under load, the rest of a batch the server had just sent) would be
    // dropped by the client and come back only after the ack wait, instead of being handed back below. Bounded: while
    // the connection is down a flush waits for the reconnect, and a stop must not.
    await within(
      this.nc.flush().catch(() => {}),
      1000,
    );
    // stop() unsubscribes; the iterator still yields what was buffered, then ends.
    messages.stop();
    try {
      for (;;) {
        const r = await this.next();
        this.pendingNext = undefined;
        if (r.done) break;
        r.value.nak(PULL_EXPIRES_MS + 1000);
      }
    } catch {
      // The iterator ended on an error (connection closing): what it held is redelivered after the ack wait.
    }
  }
}

function wrap(m: JsMsg): BusMessage {
  return {
    subject: m.subject,
    data: m.data,
    seq: m.seq,
    deliveryCount: m.info.deliveryCount,
    ack: () => m.ack(),
    nak: (delayMs) => m.nak(delayMs),
    term: (reason) => m.term(reason),
    working: () => m.working(),
  };
}

function isNotFound(err: unknown): boolean {
  const e = err as { code?: number | string; message?: string; api_error?: { err_code?: number } };
  return e?.api_error?.err_code === 10059 || e?.api_error?.err_code === 10014 || /not found/i.test(e?.message ?? '');
}

export class JetStreamBus implements Bus {
  readonly kind = 'jetstream' as const;
  readonly nc: NatsConnection;
  private readonly js: JetStreamClient;
  private readonly jsm: JetStreamManager;
  private readonly consumers = new Map<string, Consumer>();
  private readonly pulls = new Set<ContinuousPull>();
  private connected = true;
  /** Copies of every stream (and of the processors' lease bucket) a NATS cluster keeps: NATS_STREAM_REPLICAS. */
  readonly replicas: number;

  private constructor(nc: NatsConnection, jsm: JetStreamManager, log: Logger, replicas: number) {
    this.nc = nc;
    this.jsm = jsm;
    this.replicas = replicas;
    this.js = jetstream(nc);
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'disconnect') {
          this.connected = false;
          log.warn({ server: s.server }, 'nats disconnected');
        } else if (s.type === 'reconnect') {
          this.connected = true;
          log.info({ server: s.server }, 'nats reconnected');
        }
      }
    })();
  }

  /** Connects, reconnecting forever in the background; publishes fail fast (503) while disconnected. */
  static async connect(url: string, log: Logger, name = 'friction', replicas = 1): Promise<JetStreamBus> {
    const u = new URL(url);
    const nc = await connect({
      servers: `${u.hostname}:${u.port || 4222}`,
      user: u.username ? decodeURIComponent(u.username) : undefined,
      pass: u.password ? decodeURIComponent(u.password) : undefined,
      name,
      // Measured: async stack traces halve publish throughput; our errors carry enough context without them.
      noAsyncTraces: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      waitOnFirstConnect: false,
    });
    const jsm = await jetstreamManager(nc);
    return new JetStreamBus(nc, jsm, log, replicas);
  }

  async ensureStream(spec: StreamSpec): Promise<void> {
    const limits = {
      discard: spec.discard === 'new' ? DiscardPolicy.New : DiscardPolicy.Old,
      max_age: nanos(spec.maxAgeMs),
      max_msgs: spec.maxMsgs,
      max_bytes: spec.maxBytes,
      num_replicas: this.replicas,
    };
    try {
      const info = await this.jsm.streams.info(spec.name);
      // Streams created by an earlier version had no count or size limit: bring them in line with the spec.
      const c = info.config;
      if (
        c.max_msgs !== limits.max_msgs ||
        c.max_bytes !== limits.max_bytes ||
        c.discard !== limits.discard ||
        c.max_age !== limits.max_age ||
        c.num_replicas !== limits.num_replicas
      ) {
        await this.jsm.streams.update(spec.name, { ...c, ...limits });
      }
      return;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    await this.jsm.streams.add({
      name: spec.name,
      subjects: spec.subjects,
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      ...limits,
      duplicate_window: nanos(spec.duplicateWindowMs),
    });
  }

  async ensureConsumer(spec: ConsumerSpec): Promise<BusConsumer> {
    try {
      const info = await this.jsm.consumers.info(spec.stream, spec.name);
      // Consumers created by an earlier version had a delivery limit that dropped good messages during long
      // outages; bring the durable consumer in line with the spec instead of keeping what it was created with.
      if ((info.config.max_deliver ?? -1) !== spec.maxDeliver) {
        await this.jsm.consumers.update(spec.stream, spec.name, { max_deliver: spec.maxDeliver });
      }
    } catch (err) {
      if (!isNotFound(err)) throw err;
      await this.jsm.consumers.add(spec.stream, {
        durable_name: spec.name,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        filter_subject: spec.filterSubject,
        max_deliver: spec.maxDeliver,
        ack_wait: nanos(spec.ackWaitMs),
        max_ack_pending: spec.maxAckPending,
      });
    }
    const get = async (): Promise<Consumer> => {
      let c = this.consumers.get(spec.name);
      if (!c) {
        c = await this.js.consumers.get(spec.stream, spec.name);
        this.consumers.set(spec.name, c);
      }
      return c;
    };
    let pull: ContinuousPull | undefined;
    return {
      name: spec.name,
      fetch: async (max, expiresMs, windowMs = DEFAULT_BATCH_WINDOW_MS) => {
        pull ??= new ContinuousPull(await get(), this.nc, Math.max(max, 100));
        this.pulls.add(pull);
        return (await pull.fetch(max, expiresMs, windowMs)).map(wrap);
      },
      pending: async () => {
        const info = await (await get()).info(false);
        return { pending: info.num_pending, ackPending: info.num_ack_pending };
      },
      close: async () => {
        if (!pull) return;
        const closing = pull;
        pull = undefined;
        this.pulls.delete(closing);
        await closing.close();
      },
    };
  }

  async consumerLag(stream: string, consumer: string): Promise<ConsumerLag | null> {
    let info;
    try {
      info = await this.jsm.consumers.info(stream, consumer);
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
    const messages = info.num_pending + info.num_ack_pending;
    if (messages === 0) return { messages, oldestAgeMs: null };
    // Everything up to the ack floor is committed, so the first message of the consumer's subjects after it is the
    // oldest one still waiting (the server answers `next_by_subj` on STREAM.MSG.GET since 2.9; the client's type
    // only lists the direct-get form).
    const query = {
      seq: info.ack_floor.stream_seq + 1,
      next_by_subj: info.config.filter_subject ?? '>',
    } as unknown as { seq: number };
    const oldest = await this.jsm.streams.getMessage(stream, query);
    // NOTE: the stored time is the server's wall clock; hosts keep theirs in sync closely enough for a bound in seconds.
    return { messages, oldestAgeMs: oldest ? Math.max(0, Date.now() - oldest.time.getTime()) : null };
  }

  async publish(subject: string, data: Uint8Array, msgId: string): Promise<PublishResult> {
    if (!this.connected || this.nc.isClosed()) throw new UnavailableError('event stream unavailable', 5);
    try {
      const ack = await this.js.publish(subject, data, { msgID: msgId, timeout: PUBLISH_TIMEOUT_MS });
      return { duplicate: ack.duplicate, seq: ack.seq };
    } catch (err) {
      throw publishError(err);
    }
  }

  async broadcast(subject: string, data: Uint8Array): Promise<void> {
    if (!this.connected || this.nc.isClosed()) throw new UnavailableError('bus unavailable', 5);
    this.nc.publish(subject, data);
  }

  listen(subject: string, handler: (data: Uint8Array) => void): () => void {
    const sub = this.nc.subscribe(subject, {
      callback: (err, msg) => {
        if (!err) handler(msg.data);
      },
    });
    return () => sub.unsubscribe();
  }

  async healthy(): Promise<boolean> {
    if (!this.connected || this.nc.isClosed()) return false;
    try {
      await this.nc.flush();
      return true;
    } catch {
      return false;
    }
  }

  async deleteStream(name: string): Promise<void> {
    try {
      await this.jsm.streams.delete(name);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.pulls].map((p) => p.close()));
    this.pulls.clear();
    if (!this.nc.isClosed()) await this.nc.drain().catch(() => this.nc.close());
  }
}

/** JetStream's API error code for a message larger than the stream's max_msg_size. */
const MESSAGE_SIZE_EXCEEDED = 10054;

/**
 * What a failed publish means for the caller. A message the server refuses for its own size (over the connection's
 * max_payload, or the stream's maximum message size) is refused however often it is retried: not retriable, so the
 * outbox relay counts it and gives it up, and ingest answers 413. Everything else (no ack in time, a full stream
 * that refuses new messages, a lost connection) is an unavailable stream: retried.
 */
function publishError(err: unknown): Error {
  // By name: the client's packages may each bundle their own copy of the error classes.
  const e = err as { name?: unknown; code?: unknown } | null;
  const tooLarge =
    e?.name === 'InvalidArgumentError' || (e?.name === 'JetStreamApiError' && e.code === MESSAGE_SIZE_EXCEEDED);
  if (tooLarge)
    return new AppError('payload_too_large', 413, `the stream refuses the message: ${(err as Error).message}`, {
      cause: err,
    });
  return new UnavailableError('event stream did not acknowledge the publish', 5, err);
}
