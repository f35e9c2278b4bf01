import { addShortFormWrite } from '../../http/target-site.ts';
import { newId } from '../../../shared/ids.ts';
import { MANAGE_READ_ACCESS } from '../../http/auth.ts';
import type { RouteTable } from '../../http/routes.ts';
import { audit } from '../../http/audit.ts';
import type { ManageDeps } from '../../http/deps.ts';
import { insertAnnotation, listAnnotations, type AnnotationRow } from './annotations.queries.ts';
import {
  AnnotationCreateSchema,
  AnnotationListQuerySchema,
  AnnotationListSchema,
  AnnotationSchema,
} from './annotations.schema.ts';

const present = (a: AnnotationRow) => ({
  ...a,
  occurred_at: a.occurred_at.toISOString(),
  created_at: a.created_at.toISOString(),
});

/** Annotations: notes on a site's timeline (a campaign started, a vendor outage). POST /v1/annotations is the spec's short form. */
export function annotationRoutes(table: RouteTable, deps: ManageDeps): RouteTable {
  // The short form's body is only `message`: the site may also come from the query, the key, or the org's only site.
  addShortFormWrite(table, {
    plural: 'annotations',
    summary: 'Add an annotation',
    shortSummary: 'Add an annotation (short form)',
    body: AnnotationCreateSchema,
    response: AnnotationSchema,
    async handler(_ctx, { siteId, body, principal }) {
      return deps.db.transaction().execute(async (trx) => {
        const a = await insertAnnotation(trx, {
          id: newId(),
          site_id: siteId,
          message: body.message,
          page: body.page ?? null,
          occurred_at: body.occurred_at ? new Date(body.occurred_at) : deps.now(),
          created_by: principal.label,
        });
        await audit(trx, principal, {
          orgId: principal.orgId,
          siteId,
          action: 'annotation.create',
          targetType: 'annotation',
          targetId: a.id,
          summary: { message: a.message, page: a.page },
        });
        return present(a);
      });
    },
  });

  table.read({
    path: '/v1/manage/annotations',
    tag: 'annotations',
    summary: 'Annotations of a site, newest first',
    access: MANAGE_READ_ACCESS,
    query: AnnotationListQuerySchema,
    response: AnnotationListSchema,
    async handler(_ctx, { query }) {
      return {
        site_id: query.site_id,
        annotations: (await listAnnotations(deps.db, query.site_id, query.limit)).map(present),
      };
    },
  });
  return table;
}
