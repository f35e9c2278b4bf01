/**
 * Session ids as the spec shows them (`ses_` prefix). SDK session ids are opaque strings; the prefix is added
 * for display and stripped again where a session id is taken as input.
 */
export const presentSessionId = (id: string): string => (id.startsWith('ses_') ? id : `ses_${id}`);

/** A timestamp as every answer shows it (ISO 8601 UTC), null kept. Rows carry Date; raw SQL rows may carry strings. */
export const isoOrNull = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

type ListPage<K extends string, T> = Record<K, T[]> & { total: number; limit: number; offset: number };

/**
 * One page of a list as the paginated list routes answer it: the page's rows presented under the list's name, the
 * total matching, and the limit and offset the page was asked with.
 */
export function listPage<K extends string, R, T>(
  name: K,
  found: { rows: readonly R[]; total: number },
  present: (row: R) => T,
  page: { limit: number; offset: number },
): ListPage<K, T> {
  return {
    [name]: found.rows.map((r) => present(r)),
    total: found.total,
    limit: page.limit,
    offset: page.offset,
  } as ListPage<K, T>;
}
