import { sql } from 'kysely';
import type { Environment } from '../domain/deploy-verification.ts';

/**
 * The events of one environment as the engine folds them: `events.environment` is the batch's context as sent,
 * where only `staging` is staging and anything else (mostly null) is production (environmentOf).
 */
export const environmentWhere = (environment: Environment) =>
  environment === 'staging' ? sql<boolean>`environment = 'staging'` : sql<boolean>`environment is distinct from 'staging'`;
