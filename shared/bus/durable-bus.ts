import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { UnavailableError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Bus, ConsumerSpec, PublishResult, StreamSpec } from './bus.ts';
import { MemoryBus, type Stored } from './memory-bus.ts';

/** A segment is closed and a new one opened once it holds this many bytes; closed segments are deleted whole. */
const SEGMENT_BYTES = 64 * 1024 ** 2;
/** How often the consumers' acknowledged positions are written and fully consumed segments deleted. */
const CHECKPOINT_MS = 1000;

export interface DurableBusOptions {
  now?: () => number;
  memoryBudgetBytes?: number;
  /** Defaults SEGMENT_BYTES and CHECKPOINT_MS (tests make them small). */
  segmentBytes?: number;
  checkpointMs?: number;
}
const FLOORS_FILE = 'floors.json';
const SEGMENT = /^(\d{12})\.log$/;
/** Record header: payload length, CRC-32 of the payload. */
const HEADER_BYTES = 8;

interface LoggedMessage extends Stored {
  stream: string;
  msgId: string;
}

interface Segment {
  file: string;
  /** Highest sequence of each stream in the segment: the segment may go once every one is acknowledged. */
  lastSeq: Map<string, number>;
}

/** stream → consumer → first unacknowledged sequence. */
type Floors = Record<string, Record<string, number>>;

/**
 * The embedded default's bus: the in-process bus (MemoryBus), with every message appended to a log on disk
 * (`<data dir>/bus/`) before its publish resolves, so what ingest answered 202 for and what the outbox relay marked
 * published survives a graceful stop, a crash and SIGKILL, as it does in JetStream.
 * - Group commit: publishes that arrive while the log is being written and fsynced wait for the next write, and one
 *   write + fdatasync covers all of them (a few ms each), so throughput does not pay one fsync per message.
 * - Acknowledgements are not logged one by one: every second (and at close) each consumer's first unacknowledged
 *   sequence is written to floors.json. A restart replays the log from there, so what was processed but not yet
 *   checkpointed is delivered again; the processor and the dispatcher are idempotent under redelivery (JetStream
 *   redelivers the same way after a crash).
 * - Segments (64 MiB files) are deleted once every consumer acknowledged everything in them.
 * - A record is length + CRC-32 framed: a write cut short by a crash ends replay of that segment at the torn record,
 *   which belonged to a publish that had not resolved. Every start writes a new segment.
 * - A write or fsync that fails (disk full, I/O error) makes the bus refuse publishes (503, retried by the client)
 *   and report unhealthy until the process restarts: nothing is acknowledged that the log does not hold.
 * Only the process holding the embedded data directory's lock opens it (the embedded database takes that lock).
 */
export class DurableBus extends MemoryBus {
  override readonly kind: Bus['kind'] = 'log';
  private readonly dir: string;
  private readonly log: Logger;
  /** Replayed records by stream, until the stream is ensured. */
  private readonly replayed: Map<string, LoggedMessage[]>;
  private readonly floors: Floors;
  private readonly segments: Segment[];
  private current: { fh: FileHandle; segment: Segment; bytes: number };
  /** Records waiting for the next group write; `resolve`/`reject` settle their publishes. */
  private pending: { buf: Buffer; stream: string; seq: number; resolve: () => void; reject: (e: Error) => void }[] = [];
  private writing: Promise<void> | null = null;
  /** First sequence of each stream the log does not hold yet: floors never pass it. */
  private readonly durableNext = new Map<string, number>();
  private failure: Error | null = null;
  private readonly timer: NodeJS.Timeout;
  private lastFloors = '';
  private readonly segmentBytes: number;

  private constructor(
    dir: string,
    log: Logger,
    state: { replayed: Map<string, LoggedMessage[]>; floors: Floors; segments: Segment[] },
    current: { fh: FileHandle; segment: Segment; bytes: number },
    opts: DurableBusOptions,
  ) {
    super(opts);
    this.segmentBytes = opts.segmentBytes ?? SEGMENT_BYTES;
    this.dir = dir;
    this.log = log;
    this.replayed = state.replayed;
    this.floors = state.floors;
    this.segments = state.segments;
    this.current = current;
    this.timer = setInterval(() => this.checkpoint(), opts.checkpointMs ?? CHECKPOINT_MS);
    this.timer.unref();
  }

  /** Opens (creating if missing) the log in `dir` and reads it back; streams get their messages when ensured. */
  static async open(dir: string, log: Logger, opts: DurableBusOptions = {}): Promise<DurableBus> {
    mkdirSync(dir, { recursive: true });
    const floors = readFloors(dir, log);
    const replayed = new Map<string, LoggedMessage[]>();
    const segments: Segment[] = [];
    const names = readdirSync(dir)
      .filter((f) => SEGMENT.test(f))
      .sort();
    let torn = 0;
    for (const file of names) {
      const segment: Segment = { file, lastSeq: new Map() };
      const { records, tornBytes } = readSegment(readFileSync(join(dir, file)));
      torn += tornBytes;
      for (const r of records) {
        let list = replayed.get(r.stream);
        if (!list) replayed.set(r.stream, (list = []));
        list.push(r);
        segment.lastSeq.set(r.stream, r.seq);
      }
      segments.push(segment);
    }
    if (torn) log.warn({ dir, bytes: torn }, 'bus log: a write cut short by a crash was skipped (never acknowledged)');
    const next = names.length ? Number(SEGMENT.exec(names.at(-1)!)![1]) + 1 : 1;
    const segment: Segment = { file: `${String(next).padStart(12, '0')}.log`, lastSeq: new Map() };
    const fh = await open(join(dir, segment.file), 'a');
    segments.push(segment);
    return new DurableBus(dir, log, { replayed, floors, segments }, { fh, segment, bytes: 0 }, opts);
  }

  override async ensureStream(spec: StreamSpec): Promise<void> {
    const known = this.streams.has(spec.name);
    await super.ensureStream(spec);
    if (known) return;
    const records = this.replayed.get(spec.name) ?? [];
    this.replayed.delete(spec.name);
    const persisted = Object.values(this.floors[spec.name] ?? {});
    // Everything below every known consumer's floor was acknowledged: only its message id is kept (deduplication).
    const from = persisted.length ? Math.min(...persisted) : 0;
    const last = records.at(-1)?.seq ?? 0;
    const nextSeq = Math.max(last + 1, ...persisted, 1);
    const now = this.now();
    const seen = records
      .filter((r) => now - r.at <= spec.duplicateWindowMs)
      .map((r): [string, { seq: number; at: number }] => [r.msgId, { seq: r.seq, at: r.at }]);
    const keep = records
      .filter((r) => r.seq >= from)
      .map(({ seq, subject, data, at }): Stored => ({ seq, subject, data, at }));
    this.restore(spec.name, keep, nextSeq, seen);
    this.durableNext.set(spec.name, nextSeq);
    if (keep.length) this.log.info({ stream: spec.name, messages: keep.length }, 'bus log: replayed');
  }

  protected override startCursor(spec: ConsumerSpec): number {
    return this.floors[spec.stream]?.[spec.name] ?? 0;
  }

  override async publish(subject: string, data: Uint8Array, msgId: string): Promise<PublishResult> {
    if (this.failure) throw new UnavailableError(`the bus log cannot be written: ${this.failure.message}`, 5);
    return super.publish(subject, data, msgId);
  }

  protected override persist(stream: string, msg: Stored, msgId: string): Promise<void> {
    const buf = encodeRecord({ ...msg, stream, msgId });
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ buf, stream, seq: msg.seq, resolve, reject });
      this.writing ??= this.writeLoop();
    });
  }

  override async healthy(): Promise<boolean> {
    return this.failure === null && (await super.healthy());
  }

  override async deleteStream(name: string): Promise<void> {
    this.replayed.delete(name);
    delete this.floors[name];
    await super.deleteStream(name);
  }

  override async close(): Promise<void> {
    await super.close();
    clearInterval(this.timer);
    while (this.writing !== null) await this.writing;
    this.checkpoint();
    await this.current.fh.close().catch(() => {});
  }

  /** Writes what is pending, one write and one fdatasync per round, until nothing is pending. */
  private async writeLoop(): Promise<void> {
    // Publishes of this turn of the event loop join the first write.
    await new Promise<void>((r) => setImmediate(r));
    try {
      while (this.pending.length && !this.failure) {
        const group = this.pending;
        this.pending = [];
        try {
          await this.current.fh.writev(group.map((p) => p.buf));
          await this.current.fh.datasync();
        } catch (err) {
          this.failure = err as Error;
          this.log.error({ err, dir: this.dir }, 'bus log: write failed; publishes are refused until restart');
          const e = new UnavailableError(`the bus log cannot be written: ${(err as Error).message}`, 5);
          for (const p of [...group, ...this.pending]) p.reject(e);
          this.pending = [];
          return;
        }
        for (const p of group) {
          this.current.bytes += p.buf.byteLength;
          this.current.segment.lastSeq.set(p.stream, p.seq);
          this.durableNext.set(p.stream, p.seq + 1);
        }
        // Roll before answering: a publisher that has its answer sees the log as it stays (no segment appears later).
        if (this.current.bytes >= this.segmentBytes) {
          try {
            await this.roll();
          } catch (err) {
            // The group is durable in the old segment; what comes after cannot be written.
            this.failure = err as Error;
            this.log.error(
              { err, dir: this.dir },
              'bus log: cannot open a new segment; publishes are refused until restart',
            );
            const e = new UnavailableError(`the bus log cannot be written: ${(err as Error).message}`, 5);
            for (const p of this.pending) p.reject(e);
            this.pending = [];
          }
        }
        for (const p of group) p.resolve();
      }
    } finally {
      this.writing = null;
    }
  }

  private async roll(): Promise<void> {
    const next = Number(SEGMENT.exec(this.current.segment.file)![1]) + 1;
    const segment: Segment = { file: `${String(next).padStart(12, '0')}.log`, lastSeq: new Map() };
    const fh = await open(join(this.dir, segment.file), 'a');
    await this.current.fh.close();
    this.segments.push(segment);
    this.current = { fh, segment, bytes: 0 };
  }

  /**
   * Writes each consumer's first unacknowledged sequence (never past what the log holds), then deletes the closed
   * segments every consumer is done with. A floor written late only means more is delivered again after a crash.
   */
  private checkpoint(): void {
    for (const { stream, consumer, floor } of this.ackFloors()) {
      const durable = this.durableNext.get(stream) ?? floor;
      (this.floors[stream] ??= {})[consumer] = Math.min(floor, durable);
    }
    const text = JSON.stringify(this.floors);
    if (text !== this.lastFloors) {
      try {
        const tmp = join(this.dir, `${FLOORS_FILE}.tmp`);
        writeFileSync(tmp, text);
        renameSync(tmp, join(this.dir, FLOORS_FILE));
        this.lastFloors = text;
      } catch (err) {
        this.log.warn({ err }, 'bus log: cannot write the consumer positions; a restart delivers more again');
        return;
      }
    }
    while (this.segments.length > 1 && this.segments[0] !== this.current.segment && this.consumed(this.segments[0])) {
      const { file } = this.segments.shift()!;
      rmSync(join(this.dir, file), { force: true });
    }
  }

  /** Every message of the segment is below every consumer's floor (a stream no longer in use holds nothing). */
  private consumed(segment: Segment): boolean {
    for (const [stream, last] of segment.lastSeq) {
      if (!this.streams.has(stream) && !this.replayed.has(stream)) continue;
      const floors = Object.values(this.floors[stream] ?? {});
      // A stream nobody consumes yet keeps its messages (the consumer may come).
      if (!floors.length || last >= Math.min(...floors)) return false;
    }
    return true;
  }
}

function readFloors(dir: string, log: Logger): Floors {
  try {
    return JSON.parse(readFileSync(join(dir, FLOORS_FILE), 'utf8')) as Floors;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      log.warn({ err }, 'bus log: consumer positions unreadable; the whole log is delivered again');
    return {};
  }
}

function encodeRecord(r: LoggedMessage): Buffer {
  const stream = Buffer.from(r.stream);
  const subject = Buffer.from(r.subject);
  const id = Buffer.from(r.msgId);
  const payloadBytes = 1 + stream.length + 8 + 8 + 2 + subject.length + 2 + id.length + r.data.byteLength;
  const buf = Buffer.allocUnsafe(HEADER_BYTES + payloadBytes);
  let o = HEADER_BYTES;
  o = buf.writeUInt8(stream.length, o);
  o += stream.copy(buf, o);
  o = buf.writeDoubleLE(r.seq, o);
  o = buf.writeDoubleLE(r.at, o);
  o = buf.writeUInt16LE(subject.length, o);
  o += subject.copy(buf, o);
  o = buf.writeUInt16LE(id.length, o);
  o += id.copy(buf, o);
  buf.set(r.data, o);
  buf.writeUInt32LE(payloadBytes, 0);
  buf.writeUInt32LE(crc32(buf.subarray(HEADER_BYTES)), 4);
  return buf;
}

/** The whole records of a segment, in order; reading stops at the first torn or corrupt one. */
function readSegment(buf: Buffer): { records: LoggedMessage[]; tornBytes: number } {
  const records: LoggedMessage[] = [];
  let o = 0;
  while (o + HEADER_BYTES <= buf.length) {
    const len = buf.readUInt32LE(o);
    const end = o + HEADER_BYTES + len;
    if (end > buf.length) break;
    const payload = buf.subarray(o + HEADER_BYTES, end);
    if (crc32(payload) !== buf.readUInt32LE(o + 4)) break;
    let p = 0;
    const streamLen = payload.readUInt8(p++);
    const stream = payload.toString('utf8', p, (p += streamLen));
    const seq = payload.readDoubleLE(p);
    const at = payload.readDoubleLE(p + 8);
    p += 16;
    const subjectLen = payload.readUInt16LE(p);
    const subject = payload.toString('utf8', p + 2, (p += 2 + subjectLen));
    const idLen = payload.readUInt16LE(p);
    const msgId = payload.toString('utf8', p + 2, (p += 2 + idLen));
    // A copy: the segment's buffer is let go once read.
    records.push({ stream, seq, at, subject, msgId, data: Uint8Array.prototype.slice.call(payload, p) });
    o = end;
  }
  return { records, tornBytes: buf.length - o };
}
