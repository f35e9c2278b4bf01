import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import type { Environment } from '../../shared/domain/deploy-verification.ts';
import type { ElementAggregate } from '../engine/elements.ts';
import { csvArray } from '../../shared/db/csv-array.ts';

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
    const c = <T>(f: (e: ElementAggregate) => T) => upserts.map(f);
    await sql`
      insert into page_elements (site_id, page, cluster_selector, selector, label, signals, signal_count, friction_score, dominant_signal,
                                 affected_users, recommendation, last_signal_at, updated_at, environment)
      select *, ${new Date(now).toISOString()}::timestamptz, ${environment} from unnest(${csvArray(c((e) => e.siteId), 'uuid')}, ${c((e) => e.page)}::text[],
        ${c((e) => e.canonicalSelector)}::text[], ${c((e) => e.selector)}::text[], ${c((e) => e.label)}::text[],
        ${c((e) => JSON.stringify(e.signals))}::jsonb[], ${csvArray(c((e) => e.signalCount), 'int')}, ${csvArray(c((e) => e.frictionScore), 'real')},
        ${c((e) => e.dominantSignal)}::text[], ${csvArray(c((e) => e.affectedUsers), 'int')}, ${c((e) => e.recommendation)}::text[],
        ${csvArray(c((e) => new Date(e.lastSignalAt).toISOString()), 'timestamptz')})
      on conflict (site_id, environment, page, cluster_selector) do update set
        selector = excluded.selector, label = excluded.label, signals = excluded.signals, signal_count = excluded.signal_count,
        friction_score = excluded.friction_score, dominant_signal = excluded.dominant_signal, affected_users = excluded.affected_users,
        recommendation = excluded.recommendation, last_signal_at = excluded.last_signal_at, updated_at = excluded.updated_at`.execute(db);
  }
  if (removals.length > 0) {
    const c = <T>(f: (r: (typeof removals)[number]) => T) => removals.map(f);
    await sql`
      delete from page_elements e using unnest(${c((r) => r.siteId)}::uuid[], ${c((r) => r.page)}::text[], ${c((r) => r.canonicalSelector)}::text[]) as k(site_id, page, cluster_selector)
      where e.environment = ${environment} and e.site_id = k.site_id and e.page = k.page and e.cluster_selector = k.cluster_selector`.execute(db);
  }
}
