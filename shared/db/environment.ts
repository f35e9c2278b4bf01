import { sql } from 'kysely';
import type { Environment } from '../domain/deploy-verification.ts';

/**
 * The events of one environment as the engine folds them: `events.environment` is the batch's context as sent,
 * where only `staging` is staging and anything else (mostly null) is production (environmentOf). The same holds
 * for `sessions.environment`. `column` names it when the query joins tables (e.g. `e.environment`).
 */
export const environmentWhere = (environment: Environment, column = 'environment') =>
  environment === 'staging'
    ? sql<boolean>`${sql.ref(column)} = 'staging'`
    : sql<boolean>`${sql.ref(column)} is distinct from 'staging'`;
