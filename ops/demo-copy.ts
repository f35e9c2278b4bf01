/**
 * Row sinks of `friction demo --events` (ops/demo-data.ts): COPY in PostgreSQL's binary format on the PostgreSQL
 * server (no text to parse for uuids, timestamps and numbers), multi-row inserts on the embedded database (no COPY
 * protocol). A row is written field by field straight into a reused buffer: no object, array or string per row.
 */
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { DatabaseHandle } from '../shared/db/connection.ts';

export type Kind = 'uuid' | 'ts' | 'text' | 'int2' | 'int4' | 'float8' | 'bool';

export interface TableSpec {
  name:
    | 'events'
    | 'signals'
    | 'sessions'
    | 'explore_session_state'
    | 'page_viewers'
    | 'explore_session_keys'
    | 'explore_page_buckets';
  columns: readonly (readonly [string, Kind])[];
}

/** A text value encoded once and written many times. */
export class Txt {
  readonly s: string;
  readonly b: Buffer;
  constructor(s: string) {
    this.s = s;
    this.b = Buffer.from(s, 'utf8');
  }
}

/** One table's rows, written field by field in the spec's column order; `end()` closes a row. */
export interface RowSink {
  uuid(b: Uint8Array): void;
  ts(ms: number): void;
  text(v: Txt | null): void;
  /** An int2, int4 or float8 column (the spec says which), or null. */
  num(v: number | null): void;
  bool(v: boolean): void;
  end(): void;
  /** Resolves when what was written is handed to the database (backpressure). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

const HEADER = Buffer.from('PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0', 'latin1');
const CHUNK = 1 << 20;
/** Microseconds between the Unix epoch and PostgreSQL's (2000-01-01). */
const PG_EPOCH_MS = 946_684_800_000;
const TWO32 = 4_294_967_296;

/** `COPY table (...) FROM STDIN (FORMAT binary)` on its own connection. */
export class BinaryCopySink implements RowSink {
  private buf = Buffer.allocUnsafe(CHUNK + 65_536);
  private pos = 0;
  private col = 0;
  private readonly kinds: Kind[];
  private readonly stream: Writable;
  private readonly finished: Promise<void>;
  private failure: Error | undefined;
  private full = false;

  constructor(client: pg.Client, spec: TableSpec) {
    this.kinds = spec.columns.map(([, k]) => k);
    this.stream = client.query(
      copyFrom(`copy ${spec.name} (${spec.columns.map(([c]) => c).join(', ')}) from stdin with (format binary)`),
    );
    this.finished = new Promise((resolve, reject) => {
      this.stream.on('finish', resolve);
      this.stream.on('error', (err) => {
        this.failure = err;
        reject(err);
      });
    });
    this.finished.catch(() => {});
    HEADER.copy(this.buf, 0);
    this.pos = HEADER.length;
  }

  /** Starts the row on its first field, then checks the column's kind. */
  private field(kind: Kind): void {
    if (this.col === 0) {
      this.buf.writeInt16BE(this.kinds.length, this.pos);
      this.pos += 2;
    }
    const want = this.kinds[this.col++];
    if (want !== kind && !(kind === 'int4' && (want === 'int2' || want === 'float8')))
      throw new Error(`column ${this.col - 1} is ${want}, written as ${kind}`);
  }

  private nul(): void {
    this.buf.writeInt32BE(-1, this.pos);
    this.pos += 4;
  }

  uuid(b: Uint8Array): void {
    this.field('uuid');
    this.buf.writeInt32BE(16, this.pos);
    this.buf.set(b, this.pos + 4);
    this.pos += 20;
  }

  ts(ms: number): void {
    this.field('ts');
    const us = (ms - PG_EPOCH_MS) * 1000;
    const hi = Math.floor(us / TWO32);
    this.buf.writeInt32BE(8, this.pos);
    this.buf.writeInt32BE(hi, this.pos + 4);
    this.buf.writeUInt32BE(us - hi * TWO32, this.pos + 8);
    this.pos += 12;
  }

  text(v: Txt | null): void {
    this.field('text');
    if (v === null) return this.nul();
    this.buf.writeInt32BE(v.b.length, this.pos);
    v.b.copy(this.buf, this.pos + 4);
    this.pos += 4 + v.b.length;
  }

  num(v: number | null): void {
    this.field('int4');
    if (v === null) return this.nul();
    const kind = this.kinds[this.col - 1];
    if (kind === 'int2') {
      this.buf.writeInt32BE(2, this.pos);
      this.buf.writeInt16BE(v, this.pos + 4);
      this.pos += 6;
    } else if (kind === 'int4') {
      this.buf.writeInt32BE(4, this.pos);
      this.buf.writeInt32BE(v, this.pos + 4);
      this.pos += 8;
    } else {
      this.buf.writeInt32BE(8, this.pos);
      this.buf.writeDoubleBE(v, this.pos + 4);
      this.pos += 12;
    }
  }

  bool(v: boolean): void {
    this.field('bool');
    this.buf.writeInt32BE(1, this.pos);
    this.buf[this.pos + 4] = v ? 1 : 0;
    this.pos += 5;
  }

  end(): void {
    if (this.col !== this.kinds.length) throw new Error(`row of ${this.col} fields, ${this.kinds.length} columns`);
    this.col = 0;
    if (this.pos >= CHUNK) this.handOff();
  }

  /** Gives the filled part of the buffer to the stream and starts a new buffer (the stream keeps the old one). */
  private handOff(): void {
    if (this.pos === 0) return;
    if (!this.stream.write(this.buf.subarray(0, this.pos))) this.full = true;
    this.buf = Buffer.allocUnsafe(CHUNK + 65_536);
    this.pos = 0;
  }

  async flush(): Promise<void> {
    if (this.failure) throw this.failure;
    if (!this.full) return;
    this.full = false;
    await Promise.race([once(this.stream, 'drain'), this.finished]);
  }

  async close(): Promise<void> {
    this.buf.writeInt16BE(-1, this.pos);
    this.pos += 2;
    this.handOff();
    this.stream.end();
    await this.finished;
  }
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** The canonical text form of a 16-byte uuid. */
export function uuidText(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) s += '-';
    s += HEX[b[i]];
  }
  return s;
}

/** The 16 bytes of a uuid in text form. */
export function uuidBytes(s: string): Uint8Array {
  return Uint8Array.from(Buffer.from(s.replace(/-/g, ''), 'hex'));
}

/** Rows per insert: at most 500 times the widest table's 22 columns of parameters (PostgreSQL takes 65,535). */
const INSERT_BATCH = 500;

/** Batched multi-row inserts on the embedded database: rows become objects here (small sizes only). */
export class InsertSink implements RowSink {
  private rows: Record<string, unknown>[] = [];
  private row: Record<string, unknown> = {};
  private col = 0;
  private readonly handle: DatabaseHandle;
  private readonly spec: TableSpec;

  constructor(handle: DatabaseHandle, spec: TableSpec) {
    this.handle = handle;
    this.spec = spec;
  }

  private set(v: unknown): void {
    this.row[this.spec.columns[this.col++][0]] = v;
  }

  uuid(b: Uint8Array): void {
    this.set(uuidText(b));
  }

  ts(ms: number): void {
    this.set(new Date(ms));
  }

  text(v: Txt | null): void {
    this.set(v === null ? null : v.s);
  }

  num(v: number | null): void {
    this.set(v);
  }

  bool(v: boolean): void {
    this.set(v);
  }

  end(): void {
    this.rows.push(this.row);
    this.row = {};
    this.col = 0;
  }

  /**
   * Writes the whole batches gathered so far. A statement costs about a millisecond on the embedded database however
   * few its rows, and the generator flushes after every hour of its 720: writing each hour's few rows at once made
   * the demo's 4,000 test events 7,000 statements.
   */
  async flush(): Promise<void> {
    while (this.rows.length >= INSERT_BATCH) await this.write(INSERT_BATCH);
  }

  async close(): Promise<void> {
    while (this.rows.length > 0) await this.write(INSERT_BATCH);
  }

  private async write(n: number): Promise<void> {
    const rows = this.rows.splice(0, n);
    await this.handle.db
      .insertInto(this.spec.name)
      .values(rows as never)
      .execute();
  }
}
