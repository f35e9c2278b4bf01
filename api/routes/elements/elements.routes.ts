import { sql, type Kysely } from 'kysely';
import { z } from 'zod';
import type { Database } from '../../../shared/db/database.ts';
import { inOneSnapshot } from '../../../shared/db/snapshot.ts';
import { pageParams } from '../../../shared/http/pagination.ts';
import { READ_ACCESS } from '../../http/auth.ts';
import type { ReadDeps } from '../../http/deps.ts';
import type { RouteTable } from '../../http/routes.ts';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import { EnvironmentParam } from '../../../shared/contracts/environment.ts';
import { ElementListResponseSchema, type ElementSchema } from './elements.schema.ts';

export const ElementsQuerySchema = z.object({
  site_id: Uuid(),
  environment: EnvironmentParam,
  page: z.string().min(1).max(2048).optional(),
  ...pageParams({ max: 500, default: 50 }),
});

/**
 * Elements with friction signals in the last 7 days (written by the processor), most friction signals first as the
 * spec says ("top elements by friction signal count"); equal counts by friction score.
 */
export async function listElements(db: Kysely<Database>, q: z.infer<typeof ElementsQuerySchema>) {
  // One snapshot: the page and its total agree while the processor rewrites elements.
  return inOneSnapshot(db, async (trx) => {
    const base = trx
      .selectFrom('page_elements')
      .where('site_id', '=', q.site_id)
      .where('environment', '=', q.environment)
      .$if(q.page !== undefined, (qb) => qb.where('page', '=', q.page!));
    const rows = await base
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
      .execute();
    const total = await base.select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow();
    return { rows, total: total.n };
  });
}

/** Shapes one element row for the API (shared with `/query/page`'s `elements[]`). */
export function presentElement(
  r: Awaited<ReturnType<typeof listElements>>['rows'][number],
): z.output<typeof ElementSchema> {
  return {
    page: r.page,
    selector: r.selector,
    label: r.label,
    signals: (typeof r.signals === 'string' ? JSON.parse(r.signals) : r.signals) as Record<string, number>,
    signal_count: r.signal_count,
    friction_score: Math.round(r.friction_score * 10) / 10,
    dominant_signal: r.dominant_signal,
    affected_users: r.affected_users,
    recommendation: r.recommendation,
    last_signal_at: new Date(r.last_signal_at).toISOString(),
  };
}

/** `/v1/query/elements` and the short form `/v1/elements`. */
export function elementRoutes(table: RouteTable, deps: ReadDeps): RouteTable {
  return table.add({
    method: 'get',
    path: '/v1/query/elements',
    shortForm: { path: '/v1/elements', summary: 'Elements with the most friction (short form)' },
    tag: 'elements',
    summary: 'Elements with the most friction',
    access: READ_ACCESS,
    siteQuery: true,
    query: ElementsQuerySchema,
    response: ElementListResponseSchema,
    async handler(_ctx, { query }) {
      const { rows, total } = await listElements(deps.db, query);
      return { elements: rows.map(presentElement), total };
    },
  });
}
