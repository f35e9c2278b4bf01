import { type Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { inScope, onPage } from '../../shared/db/scope.ts';
import { pageWithTotal } from '../../shared/db/snapshot.ts';
import type { Environment } from '../../shared/domain/deploy-verification.ts';

/** Which elements: a site's environment, optionally one page, a window of the list. */
export interface ElementFilter {
  site_id: string;
  environment: Environment;
  page?: string;
  limit: number;
  offset: number;
}

/**
 * Elements with friction signals in the last 7 days (written by the processor), most friction signals first as the
 * spec says ("top elements by friction signal count"); equal counts by friction score.
 */
export async function listElements(db: Kysely<Database>, q: ElementFilter) {
  return pageWithTotal(
    db,
    (trx) => trx.selectFrom('page_elements').where(q.page === undefined ? inScope(q) : onPage({ ...q, page: q.page })),
    (base) =>
      base
        .select([
          'page',
          'selector',
          'label',
          'signals',
          'signal_count',
          'friction_score',
          'dominant_signal',
          'affected_users',
          'recommendation',
          'last_signal_at',
        ])
        .orderBy('signal_count', 'desc')
        .orderBy('friction_score', 'desc')
        .orderBy('page')
        .orderBy('cluster_selector')
        .limit(q.limit)
        .offset(q.offset)
        .execute(),
  );
}
