import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';

/**
 * The NATS KV bucket processors lease partitions in. The bucket's TTL (its stream's max age) is the lease TTL: a key
 * the holder stops renewing is removed by the server, so a dead processor's leases free themselves without anyone's
 * clock. Every write of a lease is a compare-and-set on the key's revision.
 * Keys: `partition.<n>` (value: the owner's id), `member.<id>` (a live processor), `config` (the partition count the
 * stream was leased with: fixed for its life).
 */
export class LeaseBucket {
  private readonly kv: KV;
  readonly ttlMs: number;

  private constructor(kv: KV, ttlMs: number) {
    this.kv = kv;
    this.ttlMs = ttlMs;
  }

  static async open(nc: NatsConnection, name: string, opts: { ttlMs: number; replicas: number }): Promise<LeaseBucket> {
    const kv = await new Kvm(nc).create(name, { ttl: opts.ttlMs, history: 1, replicas: opts.replicas });
    const status = await kv.status();
    // A bucket created with another TTL keeps it (a stream's max age is its own): the lease timing follows the bucket.
    return new LeaseBucket(kv, status.ttl || opts.ttlMs);
  }

  /**
   * Records the partition count on first use and refuses a different one later: a site's partition is its id's hash
   * modulo the count, so two counts on one stream would give one site two owners.
   */
  async checkPartitionCount(total: number): Promise<void> {
    // The config key never expires in practice: every heartbeat renews it (see PartitionLeases.beat).
    const e = await this.kv.get('config');
    const stored = e && e.operation === 'PUT' ? Number(e.string()) : null;
    if (stored !== null && stored !== total)
      throw new Error(
        `EVENT_PARTITIONS is ${total} but the processors leasing this stream use ${stored}: the count is fixed for the life of a stream (docs/scale.md)`,
      );
    await this.kv.put('config', String(total));
  }

  /** Takes a free partition; null when another processor holds it. Returns the key's revision. */
  async acquire(partition: number, me: string): Promise<number | null> {
    try {
      return await this.kv.create(`partition.${partition}`, me);
    } catch (err) {
      if (isWrongSequence(err)) return null;
      throw err;
    }
  }

  /** Renews a held lease; null when it is no longer ours at `revision` (expired, or taken). */
  async renew(partition: number, me: string, revision: number): Promise<number | null> {
    try {
      return await this.kv.update(`partition.${partition}`, me, revision);
    } catch (err) {
      if (isWrongSequence(err)) return null;
      throw err;
    }
  }

  /** Gives a lease up, only if it is still ours at `revision`. */
  async release(partition: number, revision: number): Promise<void> {
    try {
      await this.kv.delete(`partition.${partition}`, { previousSeq: revision });
    } catch (err) {
      if (!isWrongSequence(err)) throw err;
    }
  }

  /** Says this processor is alive (its fair share counts it). */
  async heartbeat(me: string): Promise<void> {
    await this.kv.put(`member.${me}`, String(Date.now()));
  }

  async leave(me: string): Promise<void> {
    await this.kv.delete(`member.${me}`);
  }

  /** Live members and the owner of every leased partition. */
  async view(): Promise<{ members: string[]; owners: Map<number, string> }> {
    const members: string[] = [];
    const owners = new Map<number, string>();
    const keys: string[] = [];
    for await (const k of await this.kv.keys()) keys.push(k);
    await Promise.all(
      keys.map(async (k) => {
        if (k.startsWith('member.')) {
          const e = await this.kv.get(k);
          if (e?.operation === 'PUT') members.push(k.slice('member.'.length));
        } else if (k.startsWith('partition.')) {
          const e = await this.kv.get(k);
          if (e?.operation === 'PUT') owners.set(Number(k.slice('partition.'.length)), e.string());
        }
      }),
    );
    return { members, owners };
  }
}

/** JetStream's answer to a compare-and-set whose revision is not the key's last (code 10071). */
function isWrongSequence(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown; api_error?: { err_code?: number } } | null;
  return (
    e?.code === 10071 ||
    e?.api_error?.err_code === 10071 ||
    (typeof e?.message === 'string' && /wrong last sequence|key exists/i.test(e.message))
  );
}
