/**
 * A least-recently-used map bounded by the bytes its values weigh (each value says its own size): storing past the
 * bound drops the least recently used entries until the total fits again; a value larger than the whole bound is not
 * stored at all. A Map keeps insertion order, so re-inserting on every hit makes its first key the least recently used.
 */
export class ByteLru<V> {
  private readonly entries = new Map<string, { value: V; bytes: number }>();
  private total = 0;
  readonly maxBytes: number;
  private readonly sizeOf: (value: V) => number;

  constructor(maxBytes: number, sizeOf: (value: V) => number) {
    if (!(maxBytes >= 0)) throw new Error(`ByteLru: maxBytes must be a number >= 0 (got ${maxBytes})`);
    this.maxBytes = maxBytes;
    this.sizeOf = sizeOf;
  }

  /** The value under `key` (now the most recently used), or undefined. */
  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, e);
    return e.value;
  }

  set(key: string, value: V): void {
    this.delete(key);
    const bytes = this.sizeOf(value);
    if (bytes > this.maxBytes) return;
    this.entries.set(key, { value, bytes });
    this.total += bytes;
    for (const [k, e] of this.entries) {
      if (this.total <= this.maxBytes) break;
      this.entries.delete(k);
      this.total -= e.bytes;
    }
  }

  delete(key: string): void {
    const e = this.entries.get(key);
    if (e === undefined) return;
    this.entries.delete(key);
    this.total -= e.bytes;
  }

  /** Bytes of every value held (never above maxBytes). */
  get bytes(): number {
    return this.total;
  }

  get size(): number {
    return this.entries.size;
  }
}
