import { Worker } from 'node:worker_threads';
import type { PGliteLike } from './pglite-pool.ts';

/** An error as it crosses the thread boundary: the message and the database fields callers read (SQLSTATE …). */
export interface WireError {
  message: string;
  name?: string;
  code?: string;
  detail?: string;
  constraint?: string;
  [field: string]: string | number | undefined;
}

export type WorkerRequest =
  | { type: 'query'; id: number; sql: string; params: unknown[] }
  | { type: 'dump' }
  | { type: 'close' };

export type WorkerReply =
  | { type: 'ready' }
  | { type: 'failed'; error: WireError }
  | { type: 'result'; id: number; rows: unknown[]; affectedRows?: number }
  | { type: 'result'; id: number; error: WireError }
  | { type: 'dumped'; data: Uint8Array }
  | { type: 'dumped'; error: WireError }
  | { type: 'closed'; error?: WireError };

const fromWire = (e: WireError): Error => Object.assign(new Error(e.message), e);

/**
 * SQLSTATE 08006 (connection failure): what a client of a PostgreSQL server sees when its backend dies. The error
 * paths already treat it as retriable (shared/errors.ts): HTTP answers 503, the processor keeps its batch.
 */
const lostError = (why: string): Error =>
  Object.assign(new Error(`the embedded database thread is gone: ${why}`), { code: '08006' });

interface Pending {
  resolve(res: { rows: unknown[]; affectedRows?: number }): void;
  reject(err: Error): void;
}

/**
 * The embedded PGlite in its own worker thread (pglite-worker.ts), seen as a PGliteLike: `query` posts one statement
 * and resolves with its rows. The WebAssembly database then uses the second core instead of the thread that answers
 * HTTP and folds batches. One thread, one PGlite connection: statements run in the order they were posted, and
 * pglite-pool.ts still hands the connection to one kysely transaction at a time.
 *
 * If the thread dies (out of memory, an abort inside the database), every waiting and later query fails at once
 * with a retriable connection error and `lost` resolves, so the process can report it and exit instead of hanging.
 */
export class PGliteThread implements PGliteLike {
  /** Resolves (never rejects) with the reason when the thread ends without close() having been called. */
  readonly lost: Promise<Error>;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private gone: Error | undefined;
  private closing: Promise<void> | undefined;
  private markLost!: (err: Error) => void;
  /** Set by close() while it waits for the statements already posted. */
  private onDrained: (() => void) | undefined;

  private readonly worker: Worker;
  /** Resolves when the thread has ended, whichever way. */
  private readonly exited: Promise<void>;

  private constructor(worker: Worker) {
    this.worker = worker;
    this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
    this.lost = new Promise((resolve) => (this.markLost = resolve));
    worker.on('message', (msg: WorkerReply) => {
      if (msg.type !== 'result') return;
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (this.pending.size === 0) this.idle();
      if ('error' in msg) p.reject(fromWire(msg.error));
      else p.resolve({ rows: msg.rows, affectedRows: msg.affectedRows });
    });
    worker.on('error', (err) => this.fail(lostError(err.message)));
    worker.on('exit', (code) => this.fail(lostError(`exited with code ${code}`)));
    // Idle, the thread does not keep the process alive (a test or a CLI command that forgot to close still ends);
    // while a statement is out it does, so a caller awaiting only the database is not cut off.
    worker.unref();
  }

  /**
   * Starts the thread and opens PGlite + TimescaleDB at `path` (a directory, or `memory://`). `seed`, for a new
   * database only, is a file dump() wrote: the database starts as a copy of it instead of an empty new one.
   */
  static async open(path: string, seed?: string): Promise<PGliteThread> {
    const worker = new Worker(new URL('./pglite-worker.ts', import.meta.url), { workerData: { path, seed } });
    await new Promise<void>((resolve, reject) => {
      const onMessage = (msg: WorkerReply) => {
        if (msg.type === 'ready') done(), resolve();
        else if (msg.type === 'failed') done(), reject(fromWire(msg.error));
      };
      const onError = (err: Error) => (done(), reject(err));
      const onExit = (code: number) => (
        done(), reject(new Error(`the embedded database thread exited with code ${code} while opening`))
      );
      const done = () => {
        worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      };
      worker.on('message', onMessage).on('error', onError).on('exit', onExit);
    }).catch(async (err: unknown) => {
      await worker.terminate();
      throw err;
    });
    return new PGliteThread(worker);
  }

  query<R>(sql: string, params: unknown[] = []): Promise<{ rows: R[]; affectedRows?: number }> {
    if (this.gone) return Promise.reject(this.gone);
    if (this.closing !== undefined) return Promise.reject(lostError('closed'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) this.worker.ref();
      this.pending.set(id, { resolve: resolve as Pending['resolve'], reject });
      this.worker.postMessage({ type: 'query', id, sql, params } satisfies WorkerRequest);
    });
  }

  /** Lets queued statements finish, closes PGlite (flushing its files) and ends the thread. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.gone) return;
      this.worker.ref();
      // PGlite's close does not wait for statements it is still running: let those already posted finish first.
      if (this.pending.size > 0) await new Promise<void>((resolve) => (this.onDrained = resolve));
      if (this.gone) return;
      const closed = new Promise<WorkerReply & { type: 'closed' }>((resolve) => {
        const onMessage = (msg: WorkerReply) => {
          if (msg.type === 'closed') this.worker.off('message', onMessage), resolve(msg);
        };
        this.worker.on('message', onMessage);
      });
      this.worker.postMessage({ type: 'close' } satisfies WorkerRequest);
      // A thread that dies while closing must not leave close() waiting for a reply that never comes.
      const reply = await Promise.race([closed, this.exited.then(() => undefined)]);
      this.gone = lostError('closed');
      await this.worker.terminate();
      if (reply?.error) throw fromWire(reply.error);
    })();
    return this.closing;
  }

  /**
   * The whole database as an uncompressed tar of its data directory (PGlite's dumpDataDir), what open()'s `seed`
   * reads: tests migrate one embedded database per run and start every other from its dump.
   */
  dump(): Promise<Uint8Array> {
    if (this.gone) return Promise.reject(this.gone);
    this.worker.ref();
    return new Promise((resolve, reject) => {
      const onMessage = (msg: WorkerReply) => {
        if (msg.type !== 'dumped') return;
        this.worker.off('message', onMessage);
        if (this.pending.size === 0) this.idle();
        if ('error' in msg) reject(fromWire(msg.error));
        else resolve(msg.data);
      };
      this.worker.on('message', onMessage);
      this.worker.postMessage({ type: 'dump' } satisfies WorkerRequest);
    });
  }

  /** Ends the thread at once without closing the database: what a crash does (tests of that path). */
  async kill(): Promise<void> {
    await this.worker.terminate();
  }

  private fail(err: Error): void {
    if (this.gone) return;
    this.gone = err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
    this.idle();
    if (!this.closing) this.markLost(err);
  }

  private idle(): void {
    if (this.onDrained) this.onDrained();
    else if (!this.closing) this.worker.unref();
  }
}
