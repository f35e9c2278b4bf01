import type { Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import { orgUsage } from '../db/queries/usage.queries.ts';
import { limitsOf, monthStart, nextMonthStart, QuotaExceededError } from './plans.ts';

interface Entry {
  exceeded: boolean;
  limit: number | null;
  used: number;
  until: number;
}

/**
 * Monthly session allowance, enforced at ingest. Counting is a database query, so each org's verdict is
 * cached for `ttlMs` (QUOTA_CACHE_TTL_MS): ingest reaches the database at most once per org per TTL, and
 * an org may overshoot its allowance by what it sends within one TTL. Counts restart on the 1st (UTC).
 */
export class SessionQuota {
  private readonly db: Kysely<Database>;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly cache = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<Entry>>();

  constructor(db: Kysely<Database>, ttlMs: number, now: () => number = Date.now) {
    this.db = db;
    this.ttlMs = ttlMs;
    this.now = now;
  }

  /** Throws QuotaExceededError (429 `quota_exceeded`, Retry-After until next month) when the org is over. */
  async enforce(orgId: string): Promise<void> {
    const e = await this.state(orgId);
    if (!e.exceeded) return;
    const now = new Date(this.now());
    const resets = nextMonthStart(now);
    throw new QuotaExceededError(
      `this organization has used its ${e.limit} sessions for the month; ingest resumes on ${resets.toISOString().slice(0, 10)}`,
      { limit: e.limit, used: e.used, resets_at: resets.toISOString() },
      Math.ceil((resets.getTime() - now.getTime()) / 1000),
    );
  }

  private async state(orgId: string): Promise<Entry> {
    const hit = this.cache.get(orgId);
    const now = this.now();
    if (hit && hit.until > now) {
      // Refresh ahead in the TTL's last fifth: ingest never waits for the count because an entry expired.
      if (now >= hit.until - this.ttlMs / 5 && !this.inflight.has(orgId)) this.load(orgId).catch(() => {});
      return hit;
    }
    return this.load(orgId);
  }

  /** One count per org at a time. */
  private load(orgId: string): Promise<Entry> {
    let pending = this.inflight.get(orgId);
    if (!pending) {
      pending = this.count(orgId).finally(() => this.inflight.delete(orgId));
      this.inflight.set(orgId, pending);
    }
    return pending;
  }

  private async count(orgId: string): Promise<Entry> {
    const now = this.now();
    const usage = await orgUsage(this.db, orgId, monthStart(new Date(now)));
    const limit = usage ? limitsOf(usage, new Date(now)).sessionsPerMonth : null;
    const entry: Entry = {
      exceeded: limit !== null && (usage?.sessions ?? 0) >= limit,
      limit,
      used: usage?.sessions ?? 0,
      until: now + this.ttlMs,
    };
    if (this.cache.size >= 100_000) this.cache.clear();
    this.cache.set(orgId, entry);
    return entry;
  }
}
