/**
 * The stream every role talks through. NATS JetStream (server mode), the in-process bus with its log on disk (the
 * embedded single-process default: durable-bus.ts) and the in-process bus alone (tests) share this interface.
 */
export interface BusMessage {
  readonly subject: string;
  readonly data: Uint8Array;
  /** Stream sequence; increases with publish order. */
  readonly seq: number;
  /** 1 on first delivery. */
  readonly deliveryCount: number;
  ack(): void;
  /** Redeliver after `delayMs`. */
  nak(delayMs?: number): void;
  /** Never redeliver (poison). */
  term(reason?: string): void;
  /** Still working on it: restarts the ack-wait timer, so the message is not redelivered meanwhile. */
  working(): void;
}

export interface PublishResult {
  /** True when the stream already had a message with this id inside its duplicate window. */
  duplicate: boolean;
  seq: number;
}

/** A batch's window when the consumer names none: a short linger for what is already on its way. */
export const DEFAULT_BATCH_WINDOW_MS = 5;

/** Durable pull consumer handle. */
export interface BusConsumer {
  readonly name: string;
  /**
   * Up to `max` messages, waiting at most `expiresMs` for the first, then taking what arrives within `windowMs` of the
   * first (default DEFAULT_BATCH_WINDOW_MS): at a steady rate the window decides how many messages share a batch.
   */
  fetch(max: number, expiresMs: number, windowMs?: number): Promise<BusMessage[]>;
  /** Messages not yet delivered plus delivered-but-unacked. */
  pending(): Promise<{ pending: number; ackPending: number }>;
  /**
   * Stops pulling (the loop that fetched is done). Messages the client holds that no fetch took go back to the stream
   * for another consumer of the same durable within seconds, instead of after the ack wait.
   */
  close(): Promise<void>;
}

/** How far a durable consumer is behind its stream: what it has not committed yet, and since when. */
export interface ConsumerLag {
  /** Messages not yet delivered plus delivered but not yet acknowledged. */
  messages: number;
  /** How long ago the oldest message the consumer has not acknowledged was stored (the bus's clock); null when none. */
  oldestAgeMs: number | null;
}

export interface ConsumerSpec {
  stream: string;
  name: string;
  filterSubject: string;
  /** Deliveries before the stream drops a message; -1 for no limit (event partitions: only poison is dropped). */
  maxDeliver: number;
  ackWaitMs: number;
  maxAckPending: number;
}

export interface StreamSpec {
  name: string;
  subjects: string[];
  /** Duplicate window for Nats-Msg-Id deduplication. */
  duplicateWindowMs: number;
  maxAgeMs: number;
  /** Most messages and bytes (payload + subject) the stream keeps; -1: no limit (the in-process bus still caps bytes by its memory budget). */
  maxMsgs: number;
  maxBytes: number;
  /**
   * What happens at a limit: `old` drops the oldest messages (notifications, whose source of truth is the
   * database); `new` refuses the publish (accepted events: the publisher answers 503 and the client retries, so
   * nothing accepted is ever dropped).
   */
  discard: 'old' | 'new';
}

export interface Bus {
  readonly kind: 'jetstream' | 'log' | 'memory';
  /** Creates streams and consumers if missing (idempotent). */
  ensureStream(spec: StreamSpec): Promise<void>;
  ensureConsumer(spec: ConsumerSpec): Promise<BusConsumer>;
  /** Resolves only once the stream has durably stored the message (or found it a duplicate). Throws UnavailableError otherwise. */
  publish(subject: string, data: Uint8Array, msgId: string): Promise<PublishResult>;
  /**
   * Fire-and-forget fan-out to every process listening on `subject` right now (core NATS, not the stream):
   * at most once, for hints that have a fallback, such as dropping a cached key on revocation.
   */
  broadcast(subject: string, data: Uint8Array): Promise<void>;
  /** Calls `handler` for each broadcast on `subject`; returns the unsubscribe function. */
  listen(subject: string, handler: (data: Uint8Array) => void): () => void;
  /** The lag of an existing durable consumer (read-only: never creates it); null when it does not exist. */
  consumerLag(stream: string, consumer: string): Promise<ConsumerLag | null>;
  /** True when the bus can accept publishes right now. */
  healthy(): Promise<boolean>;
  deleteStream(name: string): Promise<void>;
  close(): Promise<void>;
}
