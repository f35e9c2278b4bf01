import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { jsonbRows } from '../../shared/db/sql.ts';
import type { Environment } from '../../shared/domain/deploy-verification.ts';
import type { ElementAggregate } from '../engine/elements.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** Writes one environment's element aggregates (absolute values) and removes elements whose window emptied. */
export async function writeElements(
  db: Db,
  environment: Environment,
  upserts: readonly ElementAggregate[],
  removals: readonly { siteId: string; page: string; canonicalSelector: string }[],
  now: number,
): Promise<void> {
  if (upserts.length > 0) {
    // Each element's signals object travels as jsonb as it is (array escaping of every field cost more CPU here than
    // building the aggregates).
    const rows = upserts.map((e) => [
      e.siteId,
      e.page,
      e.canonicalSelector,
      e.selector,
      e.label,
      e.signals,
      e.signalCount,
      e.frictionScore,
      e.dominantSignal,
      e.affectedUsers,
      e.recommendation,
      e.lastSignalAt,
    ]);
    await sql`
      insert into page_elements (site_id, page, cluster_selector, selector, label, signals, signal_count, friction_score, dominant_signal,
                                 affected_users, recommendation, last_signal_at, updated_at, environment)
      select (r->>0)::uuid, r->>1, r->>2, r->>3, r->>4, r->5, (r->>6)::int, (r->>7)::real, r->>8, (r->>9)::int, r->>10,
        to_timestamp((r->>11)::float8 / 1000), ${new Date(now).toISOString()}::timestamptz, ${environment}
      from ${jsonbRows(rows)}
      on conflict (site_id, environment, page, cluster_selector) do update set
        selector = excluded.selector, label = excluded.label, signals = excluded.signals, signal_count = excluded.signal_count,
        friction_score = excluded.friction_score, dominant_signal = excluded.dominant_signal, affected_users = excluded.affected_users,
        recommendation = excluded.recommendation, last_signal_at = excluded.last_signal_at, updated_at = excluded.updated_at`.execute(
      db,
    );
  }
  if (removals.length > 0) {
    const c = <T>(f: (r: (typeof removals)[number]) => T) => removals.map(f);
    await sql`
      delete from page_elements e using unnest(${c((r) => r.siteId)}::uuid[], ${c((r) => r.page)}::text[], ${c((r) => r.canonicalSelector)}::text[]) as k(site_id, page, cluster_selector)
      where e.environment = ${environment} and e.site_id = k.site_id and e.page = k.page and e.cluster_selector = k.cluster_selector`.execute(
      db,
    );
  }
}
