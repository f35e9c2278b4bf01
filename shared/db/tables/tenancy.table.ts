import type { Generated } from 'kysely';
import type { Timestamp, GeneratedTimestamp, NullableTimestamp, Json } from './columns.ts';

// Organisations, their sites, API keys, environments, SDK configs and instance secrets.

export interface OrgTable {
  id: string;
  name: string;
  plan: Generated<string>;
  trial_ends_at: Timestamp | null;
  created_at: GeneratedTimestamp;
  /** Enterprise (custom) limits; null means the plan's own. */
  site_limit: Generated<number | null>;
  session_limit: Generated<number | null>;
}

export interface SiteTable {
  id: string;
  org_id: string;
  name: string;
  url: string;
  status: Generated<string>;
  created_at: GeneratedTimestamp;
  updated_at: GeneratedTimestamp;
  /** Soft deletion: the site is gone for every route, its sessions still count toward the month. */
  deleted_at: NullableTimestamp;
  /** Days its events, signals and sessions are kept (31 to 90); null: the instance's 90. */
  retention_days: Generated<number | null>;
}

export interface ApiKeyTable {
  id: string;
  org_id: string;
  site_id: string | null;
  /** publishable | secret | mcp */
  key_type: string;
  /** The first characters of the key, for display ("svc_sec_AbCd…"). */
  key_prefix: string;
  key_hash: string;
  scopes: string[];
  name: string | null;
  created_at: GeneratedTimestamp;
  revoked_at: Timestamp | null;
}

export interface EnvironmentTable {
  id: string;
  site_id: string;
  name: string;
  created_at: GeneratedTimestamp;
}

export interface SdkConfigTable {
  environment_id: string;
  site_id: string;
  config: Json;
  updated_at: GeneratedTimestamp;
}

export interface InstanceSecretTable {
  name: string;
  value: string;
  created_at: GeneratedTimestamp;
}
