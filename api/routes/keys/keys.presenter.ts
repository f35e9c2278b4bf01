import type { ApiKeyRow } from './keys.queries.ts';

/** A key as every keys route answers it: its row but the org (the site says it), times in ISO 8601. */
export function presentKey({ org_id: _org, created_at, revoked_at, ...key }: ApiKeyRow) {
  return { ...key, created_at: created_at.toISOString(), revoked_at: revoked_at?.toISOString() ?? null };
}
