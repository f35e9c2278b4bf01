import type { IntegrationRow } from './integrations.queries.ts';

/** An integration as every integrations route answers it: the names of its sealed fields, never their values. */
export function presentIntegration(i: IntegrationRow) {
  return {
    id: i.id,
    site_id: i.site_id,
    provider: i.provider,
    config: i.config,
    secrets: i.secret_fields,
    created_at: i.created_at.toISOString(),
    updated_at: i.updated_at.toISOString(),
  };
}
