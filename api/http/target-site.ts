import type Koa from 'koa';
import type { z } from 'zod';
import { Uuid } from '../../shared/contracts/uuid.ts';
import { ValidationError } from '../../shared/errors.ts';
import { MANAGE_WRITE_ACCESS, type Principal } from './auth.ts';
import type { Guard, RouteTable } from './routes.ts';

/**
 * The site a short-form write is for (a CI deploy call, an annotation whose body may be only its message): the
 * body's `site_id`, else the query's, else the key's own site, else the org's only site; 400 when none says, 404
 * when the caller may not write to it.
 */
function targetSite(
  ctx: Koa.Context,
  { body, principal, guard }: { body: { site_id?: string }; principal: Principal; guard: Guard },
): string {
  const fromQuery = Uuid().safeParse(ctx.query.site_id);
  const onlySite = principal.siteIds.size === 1 ? [...principal.siteIds][0] : null;
  const siteId =
    body.site_id ??
    (fromQuery.success ? fromQuery.data : null) ??
    (principal.kind === 'key' ? principal.siteId : onlySite);
  if (!siteId)
    throw new ValidationError('invalid body: site_id: is required when the organization has several sites', [
      { path: 'site_id', message: 'is required when the organization has several sites' },
    ]);
  guard.site(siteId, 'site not found');
  return siteId;
}

/**
 * A write the spec also takes in short form, POST `/v1/<plural>` beside `/v1/manage/<plural>` (a CI deploy call, an
 * annotation): an editor's or a managing key's, answered 201, for the site targetSite names; `handler` runs once the
 * caller may write to that site.
 */
export function addShortFormWrite<B extends z.ZodType<{ site_id?: string }>>(
  table: RouteTable,
  spec: {
    plural: string;
    summary: string;
    /** The short form's summary. */
    shortSummary: string;
    description?: string;
    body: B;
    response: z.ZodType;
    handler(ctx: Koa.Context, input: { siteId: string; body: z.infer<B>; principal: Principal }): Promise<unknown>;
  },
): RouteTable {
  return table.add({
    method: 'post',
    path: `/v1/manage/${spec.plural}`,
    shortForm: { path: `/v1/${spec.plural}`, summary: spec.shortSummary, description: spec.description },
    tag: spec.plural,
    status: 201,
    summary: spec.summary,
    description: spec.description,
    access: MANAGE_WRITE_ACCESS,
    body: spec.body,
    response: spec.response,
    handler: (ctx, input) =>
      spec.handler(ctx, {
        siteId: targetSite(ctx, input),
        body: input.body as z.infer<B>,
        principal: input.principal,
      }),
  });
}

/**
 * The tenancy of a list by org_id or site_id (webhooks, integrations): each id given is checked, and the site listed
 * is the query's, or for a key bound to a site always its own.
 */
export function listedSite(
  query: { org_id?: string; site_id?: string },
  principal: Principal,
  guard: Guard,
): string | undefined {
  if (query.site_id) guard.site(query.site_id, 'site not found');
  if (query.org_id) guard.org(query.org_id, 'organization not found');
  return principal.kind === 'key' ? (principal.siteId ?? query.site_id) : query.site_id;
}
