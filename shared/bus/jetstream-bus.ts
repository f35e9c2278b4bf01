import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, DiscardPolicy, RetentionPolicy, StorageType, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { Consumer, JetStreamClient, JetStreamManager, JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import { UnavailableError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Bus, BusConsumer, BusMessage, ConsumerSpec, PublishResult, StreamSpec } from './bus.ts';

/** How long ingest waits for the stream's PubAck before answering 503. */
const PUBLISH_TIMEOUT_MS = 3000;

function wrap(m: JsMsg): BusMessage {
  return {
    subject: m.subject,
    data: m.data,
    seq: m.seq,
    deliveryCount: m.info.deliveryCount,
    ack: () => m.ack(),
    nak: (delayMs) => m.nak(delayMs),
    term: (reason) => m.term(reason),
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
  private connected = true;

  private constructor(nc: NatsConnection, jsm: JetStreamManager, log: Logger) {
    this.nc = nc;
    this.jsm = jsm;
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
  static async connect(url: string, log: Logger, name = 'friction'): Promise<JetStreamBus> {
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
    return new JetStreamBus(nc, jsm, log);
  }

  async ensureStream(spec: StreamSpec): Promise<void> {
    try {
      await this.jsm.streams.info(spec.name);
      return;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    await this.jsm.streams.add({
      name: spec.name,
      subjects: spec.subjects,
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      discard: DiscardPolicy.Old,
      max_age: nanos(spec.maxAgeMs),
      duplicate_window: nanos(spec.duplicateWindowMs),
    });
  }

  async ensureConsumer(spec: ConsumerSpec): Promise<BusConsumer> {
    try {
      await this.jsm.consumers.info(spec.stream, spec.name);
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
    return {
      name: spec.name,
      fetch: async (max, expiresMs) => {
        const c = await get();
        const out: BusMessage[] = [];
        // nats.js refuses pull expiries under one second.
        const iter = await c.fetch({ max_messages: max, expires: Math.max(1000, expiresMs) });
        for await (const m of iter) out.push(wrap(m));
        return out;
      },
      pending: async () => {
        const info = await (await get()).info(false);
        return { pending: info.num_pending, ackPending: info.num_ack_pending };
      },
    };
  }

  async publish(subject: string, data: Uint8Array, msgId: string): Promise<PublishResult> {
    if (!this.connected || this.nc.isClosed()) throw new UnavailableError('event stream unavailable', 5);
    try {
      const ack = await this.js.publish(subject, data, { msgID: msgId, timeout: PUBLISH_TIMEOUT_MS });
      return { duplicate: ack.duplicate, seq: ack.seq };
    } catch (err) {
      throw new UnavailableError('event stream did not acknowledge the publish', 5, err);
    }
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
    if (!this.nc.isClosed()) await this.nc.drain().catch(() => this.nc.close());
  }
}
