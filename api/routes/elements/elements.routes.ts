import { presentElement } from '../../read-models/elements.presenter.ts';
import { listElements } from '../../read-models/elements.queries.ts';
import type { ReadDeps } from '../../http/deps.ts';
import type { RouteTable } from '../../http/routes.ts';
import { ElementListResponseSchema, ElementsQuerySchema } from './elements.schema.ts';

/** `/v1/query/elements` and the short form `/v1/elements`. */
export function elementRoutes(table: RouteTable, deps: ReadDeps): RouteTable {
  return table.read({
    path: '/v1/query/elements',
    shortForm: 'Elements with the most friction (short form)',
    tag: 'elements',
    summary: 'Elements with the most friction',
    query: ElementsQuerySchema,
    response: ElementListResponseSchema,
    async handler(_ctx, { query }) {
      const { rows, total } = await listElements(deps.db, query);
      return { elements: rows.map(presentElement), total };
    },
  });
}
