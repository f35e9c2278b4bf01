import { UnavailableError } from '../errors.ts';
import { DEFAULT_BATCH_WINDOW_MS } from './bus.ts';
import type { Bus, BusConsumer, BusMessage, ConsumerLag, ConsumerSpec, PublishResult, StreamSpec } from './bus.ts';
import { subjectMatches } from './subject-match.ts';

export interface Stored {
  seq: number;
  subject: string;
  data: Uint8Array;
  at: number;
}

interface Inflight {
  msg: Stored;
  deliveries: number;
  /** Redeliver when now passes this (ack wait, or nak delay). */
  dueAt: number;
  /** Delivered and waiting for ack; false while parked by a nak. */
  outstanding: boolean;
}

interface StreamState {
  spec: StreamSpec;
  /** messages[i].seq === base + i */
  messages: Stored[];
  base: number;
  nextSeq: number;
  /** Payload + subject bytes of `messages` (the JetStream accounting, near enough). */
  bytes: number;
  dedup: Map<string, { seq: number; at: number }>;
  consumers: ConsumerState[];
}

interface ConsumerState {
  spec: ConsumerSpec;
  /** Next stream sequence to look at for first delivery. */
  cursor: number;
  inflight: Map<number, Inflight>;
}

/**
 * In-process bus: same semantics as our JetStream use (msg-id dedup window, durable pull consumers with explicit
 * ack, nak delay, ack-wait redelivery, max deliver). It lives in memory, so unprocessed messages do not survive the
 * process: the embedded default runs its subclass DurableBus (durable-bus.ts), which logs every message to disk
 * before its publish resolves; this one serves tests and tools that need no durability.
 */
export class MemoryBus implements Bus {
  readonly kind: Bus['kind'] = 'memory';
  protected readonly streams = new Map<string, StreamState>();
  private waiters = new Set<() => void>();
  private readonly listeners = new Map<string, Set<(data: Uint8Array) => void>>();
  private closed = false;
  protected readonly now: () => number;

  private readonly memoryBudgetBytes: number;

  /** `memoryBudgetBytes` caps each stream whose spec sets no byte limit (default 512 MiB). */
  constructor(opts: { now?: () => number; memoryBudgetBytes?: number } = {}) {
    this.now = opts.now ?? Date.now;
    this.memoryBudgetBytes = opts.memoryBudgetBytes ?? 512 * 1024 ** 2;
  }

  async ensureStream(spec: StreamSpec): Promise<void> {
    if (!this.streams.has(spec.name)) {
      this.streams.set(spec.name, {
        spec,
        messages: [],
        base: 1,
        nextSeq: 1,
        bytes: 0,
        dedup: new Map(),
        consumers: [],
      });
    }
  }

  async ensureConsumer(spec: ConsumerSpec): Promise<BusConsumer> {
    const stream = this.streams.get(spec.stream);
    if (!stream) throw new Error(`stream ${spec.stream} not found`);
    let state = stream.consumers.find((c) => c.spec.name === spec.name);
    if (!state) {
      state = { spec, cursor: Math.max(stream.base, this.startCursor(spec)), inflight: new Map() };
      stream.consumers.push(state);
    }
    const st = state;
    return {
      name: spec.name,
      fetch: (max, expiresMs, windowMs = DEFAULT_BATCH_WINDOW_MS) => this.fetch(stream, st, max, expiresMs, windowMs),
      pending: async () => this.pendingOf(stream, st),
      // Nothing is held outside the bus: a message is taken only by a fetch.
      close: async () => {},
    };
  }

  private pendingOf(stream: StreamState, st: ConsumerState): { pending: number; ackPending: number } {
    let pending = 0;
    for (let s = Math.max(st.cursor, stream.base); s < stream.nextSeq; s++) {
      if (subjectMatches(st.spec.filterSubject, stream.messages[s - stream.base].subject)) pending++;
    }
    let ackPending = 0;
    for (const f of st.inflight.values()) if (f.outstanding) ackPending++;
    return { pending: pending + st.inflight.size - ackPending, ackPending };
  }

  async consumerLag(streamName: string, consumer: string): Promise<ConsumerLag | null> {
    const stream = this.streams.get(streamName);
    const st = stream?.consumers.find((c) => c.spec.name === consumer);
    if (!stream || !st) return null;
    const { pending, ackPending } = this.pendingOf(stream, st);
    let oldestAt: number | null = null;
    for (const f of st.inflight.values()) oldestAt = Math.min(oldestAt ?? f.msg.at, f.msg.at);
    for (let s = Math.max(st.cursor, stream.base); s < stream.nextSeq; s++) {
      const m = stream.messages[s - stream.base];
      if (subjectMatches(st.spec.filterSubject, m.subject)) {
        oldestAt = Math.min(oldestAt ?? m.at, m.at);
        break;
      }
    }
    return {
      messages: pending + ackPending,
      oldestAgeMs: oldestAt === null ? null : Math.max(0, this.now() - oldestAt),
    };
  }

  async publish(subject: string, data: Uint8Array, msgId: string): Promise<PublishResult> {
    if (this.closed) throw new UnavailableError('event stream closed', 5);
    const stream = [...this.streams.values()].find((s) => s.spec.subjects.some((f) => subjectMatches(f, subject)));
    if (!stream) throw new UnavailableError(`no stream for subject ${subject}`, 5);
    const now = this.now();
    this.expire(stream, now);
    const seen = stream.dedup.get(msgId);
    if (seen) return { duplicate: true, seq: seen.seq };
    const size = data.byteLength + subject.length;
    const { discard } = stream.spec;
    const maxMsgs = stream.spec.maxMsgs > 0 ? stream.spec.maxMsgs : Number.POSITIVE_INFINITY;
    const maxBytes = stream.spec.maxBytes > 0 ? stream.spec.maxBytes : this.memoryBudgetBytes;
    if (discard === 'new' && (stream.messages.length + 1 > maxMsgs || stream.bytes + size > maxBytes)) {
      throw new UnavailableError(`stream ${stream.spec.name} is full (${maxMsgs} messages / ${maxBytes} bytes)`, 5);
    }
    const seq = stream.nextSeq++;
    stream.messages.push({ seq, subject, data, at: now });
    stream.bytes += size;
    while (stream.messages.length > 0 && (stream.messages.length > maxMsgs || stream.bytes > maxBytes))
      this.dropOldest(stream);
    stream.dedup.set(msgId, { seq, at: now });
    this.wake();
    await this.persist(stream.spec.name, { seq, subject, data, at: now }, msgId);
    return { duplicate: false, seq };
  }

  /**
   * Where a consumer created now starts: the first message the stream holds. DurableBus starts a consumer it knew
   * before a restart at the first message it had not acknowledged.
   */
  protected startCursor(_spec: ConsumerSpec): number {
    return 0;
  }

  /** Resolves once the message is durable: at once here (memory only); DurableBus logs it to disk first. */
  protected persist(_stream: string, _msg: Stored, _msgId: string): Promise<void> | undefined {
    return undefined;
  }

  /**
   * Puts back messages stored before a restart (DurableBus's replay), in sequence order, before anything is published:
   * the stream continues at `nextSeq`; `seen` are the message ids still inside the duplicate window.
   */
  protected restore(
    streamName: string,
    messages: readonly Stored[],
    nextSeq: number,
    seen: ReadonlyArray<[string, { seq: number; at: number }]>,
  ): void {
    const stream = this.streams.get(streamName);
    if (!stream || stream.nextSeq !== 1) throw new Error(`stream ${streamName} cannot be restored after use`);
    stream.base = messages.length ? messages[0].seq : nextSeq;
    stream.nextSeq = nextSeq;
    for (const m of messages) {
      stream.messages.push(m);
      stream.bytes += m.data.byteLength + m.subject.length;
    }
    for (const [id, e] of seen) stream.dedup.set(id, e);
  }

  /**
   * The first sequence each consumer has not acknowledged (delivered and unacked, or not yet delivered): what a
   * restart must deliver again.
   */
  protected ackFloors(): Array<{ stream: string; consumer: string; floor: number }> {
    const out: Array<{ stream: string; consumer: string; floor: number }> = [];
    for (const [name, stream] of this.streams)
      for (const c of stream.consumers) {
        let floor = Math.max(c.cursor, stream.base);
        for (const seq of c.inflight.keys()) floor = Math.min(floor, seq);
        out.push({ stream: name, consumer: c.spec.name, floor });
      }
    return out;
  }

  async broadcast(subject: string, data: Uint8Array): Promise<void> {
    for (const [filter, handlers] of this.listeners)
      if (subjectMatches(filter, subject)) for (const h of handlers) h(data);
  }

  listen(subject: string, handler: (data: Uint8Array) => void): () => void {
    const set = this.listeners.get(subject) ?? new Set();
    set.add(handler);
    this.listeners.set(subject, set);
    return () => set.delete(handler);
  }

  async healthy(): Promise<boolean> {
    return !this.closed;
  }

  async deleteStream(name: string): Promise<void> {
    this.streams.delete(name);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wake();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = new Set();
    for (const f of w) f();
  }

  /**
   * Drops dedup entries past the window, messages past max age (whether or not anyone consumes the stream, as
   * JetStream does), and messages every consumer has moved past.
   */
  private expire(stream: StreamState, now: number): void {
    for (const [id, e] of stream.dedup) {
      if (now - e.at <= stream.spec.duplicateWindowMs) break; // Map keeps insertion order: oldest first
      stream.dedup.delete(id);
    }
    while (stream.messages.length > 0 && now - stream.messages[0].at > stream.spec.maxAgeMs) this.dropOldest(stream);
    if (stream.consumers.length === 0) return;
    const keepFrom = Math.min(...stream.consumers.map((c) => c.cursor));
    while (stream.messages.length > 0 && stream.messages[0].seq < keepFrom) this.dropOldest(stream);
  }

  /** Removes the oldest message; consumers that had not reached it skip it (JetStream's discard-old). */
  private dropOldest(stream: StreamState): void {
    const m = stream.messages.shift()!;
    stream.bytes -= m.data.byteLength + m.subject.length;
    stream.base++;
    for (const c of stream.consumers) if (c.cursor < stream.base) c.cursor = stream.base;
  }

  private take(stream: StreamState, c: ConsumerState, max: number): BusMessage[] {
    const now = this.now();
    const out: BusMessage[] = [];
    // Redeliveries first (nak'd and expired), oldest sequence first, like JetStream.
    for (const [seq, f] of [...c.inflight].sort((a, b) => a[0] - b[0])) {
      if (out.length >= max) break;
      if (f.dueAt > now) continue;
      if (c.spec.maxDeliver > 0 && f.deliveries >= c.spec.maxDeliver) {
        c.inflight.delete(seq);
        continue;
      }
      out.push(this.deliver(c, f.msg, f.deliveries + 1, now));
    }
    while (out.length < max && c.cursor < stream.nextSeq) {
      const s = stream.messages[c.cursor - stream.base];
      c.cursor++;
      if (s && subjectMatches(c.spec.filterSubject, s.subject)) out.push(this.deliver(c, s, 1, now));
    }
    this.expire(stream, now);
    return out;
  }

  private deliver(c: ConsumerState, msg: Stored, deliveries: number, now: number): BusMessage {
    const f: Inflight = { msg, deliveries, dueAt: now + c.spec.ackWaitMs, outstanding: true };
    c.inflight.set(msg.seq, f);
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled || c.inflight.get(msg.seq) !== f) return;
      settled = true;
      fn();
      this.wake();
    };
    return {
      subject: msg.subject,
      data: msg.data,
      seq: msg.seq,
      deliveryCount: deliveries,
      ack: () => settle(() => c.inflight.delete(msg.seq)),
      term: () => settle(() => c.inflight.delete(msg.seq)),
      working: () => {
        if (!settled && c.inflight.get(msg.seq) === f && f.outstanding) f.dueAt = this.now() + c.spec.ackWaitMs;
      },
      nak: (delayMs = 0) =>
        settle(() => {
          f.dueAt = this.now() + delayMs;
          f.outstanding = false;
        }),
    };
  }

  private async fetch(
    stream: StreamState,
    c: ConsumerState,
    max: number,
    expiresMs: number,
    windowMs: number,
  ): Promise<BusMessage[]> {
    const deadline = this.now() + expiresMs;
    const got: BusMessage[] = [];
    // The window opens at the first message, what arrives within it joins the batch. Real time, not the bus's clock
    // (which tests move by hand): it is the latency a batch adds.
    let windowEnds = 0;
    for (;;) {
      if (this.closed) return got;
      const first = got.length === 0;
      got.push(...this.take(stream, c, max - got.length));
      if (first && got.length > 0) windowEnds = performance.now() + windowMs;
      if (got.length >= max) return got;
      const left = got.length > 0 ? windowEnds - performance.now() : deadline - this.now();
      if (left <= 0) return got;
      const nextDue = Math.min(...[...c.inflight.values()].map((f) => f.dueAt), Number.POSITIVE_INFINITY);
      const wait = Math.max(1, Math.min(left, nextDue - this.now()));
      await new Promise<void>((resolve) => {
        const t = setTimeout(done, wait);
        function done() {
          clearTimeout(t);
          resolve();
        }
        this.waiters.add(done);
      });
    }
  }
}
