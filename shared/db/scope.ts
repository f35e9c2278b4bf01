import { sql, type Expression, type ExpressionBuilder, type SelectType, type SqlBool } from 'kysely';
import type { Environment } from '../domain/deploy-verification.ts';
import type { Database } from './database.ts';

/**
 * The tables whose rows belong to one environment of one site (`site_id` and a non-null `environment`, migration
 * 0100): scores, issues, elements, signals, deploys, rollups. Their indexes lead with (site_id, environment), so
 * nearly every read of them starts with the scope below. `events` and `sessions` are not among them: their
 * environment is the context as sent, null meaning production (environmentWhere).
 */
export type ScopedTable = {
  [T in keyof Database]: 'site_id' | 'environment' extends keyof Database[T]
    ? null extends SelectType<Database[T]['environment' & keyof Database[T]]>
      ? never
      : T
    : never;
}[keyof Database];

/** The ScopedTables with a `page` column (all but `deploys`). */
export type PageScopedTable = { [T in ScopedTable]: 'page' extends keyof Database[T] ? T : never }[ScopedTable];

/** One environment of one site, named as its columns (and as the read routes' query parameters). */
export interface SiteScope {
  site_id: string;
  environment: Environment;
}

/** One page of a site's environment. */
export interface PageScope extends SiteScope {
  page: string;
}

/**
 * `site_id = … and environment = …`: the rows of one site's environment in a query over a ScopedTable, as
 * `.where(inScope(s))`. The table's own type checks that it has both columns; the predicate is the two `where`s it
 * replaces, so the same indexes serve it.
 */
export const inScope =
  (s: SiteScope) =>
  <TB extends ScopedTable>(eb: ExpressionBuilder<Database, TB>): Expression<SqlBool> =>
    eb.and(scopeTerms(eb, s));

/** inScope narrowed to one page: `… and page = …`. */
export const onPage =
  (s: PageScope) =>
  <TB extends PageScopedTable>(eb: ExpressionBuilder<Database, TB>): Expression<SqlBool> =>
    eb.and([...scopeTerms(eb, s), eb(sql.ref('page'), '=', s.page)]);

const scopeTerms = <TB extends ScopedTable>(eb: ExpressionBuilder<Database, TB>, s: SiteScope) => [
  eb(sql.ref('site_id'), '=', s.site_id),
  eb(sql.ref('environment'), '=', s.environment),
];
