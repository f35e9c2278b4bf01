/**
 * Test-only: where the real services are. `npm test` (ops/test-with-services.ts) sets these for every test
 * worker; the defaults are this machine's own services.
 */

/** A short random token for names (databases, stream prefixes, Redis prefixes). */
export const uniqueTestId = (): string => Math.random().toString(36).slice(2, 10);

/**
 * This `npm test` run's id (the runner hands it to the workers): in the name of every database the run creates, so the
 * runner finds and drops them all, and never another run's.
 */
export const testRunId: string = process.env.TEST_RUN_ID ?? uniqueTestId();

export const testServices: { databaseUrl: string; templateDatabase: string; natsUrl: string; redisUrl: string } = {
  /** Admin connection (any database) used to create per-file databases from the migrated template. */
  databaseUrl: process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  // One template per `npm test` run (the runner hands its name to the workers and drops it at the end), so
  // concurrent runs against one server never drop each other's template.
  templateDatabase: process.env.TEST_TEMPLATE_DATABASE ?? `friction_test_template_${testRunId}`,
  natsUrl: process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222',
  redisUrl: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
};
