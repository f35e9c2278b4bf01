import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import { openDatabase, type DatabaseHandle } from './db/connection.ts';
import { migrateToLatest, pendingMigrations } from './db/migrator.ts';
import type { Bus } from './bus/bus.ts';
import { JetStreamBus } from './bus/jetstream-bus.ts';
import { MemoryBus } from './bus/memory-bus.ts';
import { ensureStreams } from './bus/topology.ts';
import { topology, type Topology } from './contracts/subjects.ts';
import type { RateLimiter } from './limiter/limiter.ts';
import { MemoryRateLimiter } from './limiter/limiter.ts';
import { RedisRateLimiter } from './limiter/redis-limiter.ts';
import { KeyResolver, listenForRevocations } from './auth/key-resolver.ts';
import { SdkConfigCache, listenForSdkConfigChanges } from './tenancy/sdk-config-cache.ts';
import { sql } from 'kysely';

/**
 * A service the process needs is not there (database, NATS, the port): the CLI prints the message as one line
 * and exits 1. The message names the setting and what to do.
 */
export class StartupError extends Error {
  override name = 'StartupError';
}

/** A URL for messages: the password replaced, never printed. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable URL)';
  }
}

const reason = (err: unknown): string => {
  const e = err as { code?: string; message?: string; errors?: { code?: string }[] };
  return e?.code ?? e?.errors?.[0]?.code ?? e?.message ?? String(err);
};

/**
 * A role whose code is ahead of the database would fail on every statement that touches the new schema (a
 * processor would pause every partition, an API would answer 500): it refuses to start instead, saying what to run.
 */
async function refuseOlderSchema(database: DatabaseHandle): Promise<void> {
  const pending = await pendingMigrations(database.db);
  if (pending.length === 0) return;
  await database.close().catch(() => {});
  const list = pending.length > 3 ? `${pending.slice(0, 3).join(', ')} and ${pending.length - 3} more` : pending.join(', ');
  throw new StartupError(`the database schema is behind this build: ${pending.length} migration(s) not applied (${list}). Run \`friction migrate\` against the same DATABASE_URL, then start this role again.`);
}

/** One query; a failure becomes a StartupError naming DATABASE_URL. */
export async function checkDatabase(db: DatabaseHandle['db'], url: string): Promise<void> {
  try {
    await sql`select 1`.execute(db);
  } catch (err) {
    throw new StartupError(`cannot reach the database at ${redactUrl(url)} (DATABASE_URL): ${reason(err)}. Is PostgreSQL running and the URL right? Unset DATABASE_URL for the embedded database.`);
  }
}

/**
 * Waits for the database to answer, up to `timeoutMs` (containers start in any order): one log line per attempt
 * that failed, then a StartupError naming DATABASE_URL.
 */
export async function waitForDatabase(db: DatabaseHandle['db'], url: string, timeoutMs: number, log: Logger): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await checkDatabase(db, url);
    } catch (err) {
      if (Date.now() + 1000 > until) throw err;
      log.warn({ attempt, url: redactUrl(url), reason: (err as Error).message }, 'database not reachable yet; retrying in 1 s');
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

/** The infrastructure every role receives: built once by the entry point, closed in reverse order. */
export interface Infra {
  config: Config;
  log: Logger;
  database: DatabaseHandle;
  bus: Bus;
  limiter: RateLimiter;
  keys: KeyResolver;
  /** SDK configs by site and environment (ingest: GET /v1/sdk-config and the ignore-selector check). */
  sdkConfigs: SdkConfigCache;
  topology: Topology;
}

/**
 * Connects to the configured services, or the embedded defaults for those unset (PGlite+TimescaleDB,
 * in-process bus, in-process limiter). `migrate` runs migrations (single-process start, tests).
 */
export async function openInfra(config: Config, log: Logger, opts: { migrate: boolean; embeddedPath?: string } = { migrate: false }): Promise<Infra> {
  const database = await timed(log, config.DATABASE_URL ? 'connect to the database' : 'open the embedded database', () =>
    openDatabase({
      url: config.DATABASE_URL,
      dataDir: config.FRICTION_DATA_DIR,
      embeddedPath: opts.embeddedPath,
      connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
      statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
      preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
    }));
  if (config.DATABASE_URL) await checkDatabase(database.db, config.DATABASE_URL).catch(async (err) => {
    await database.close().catch(() => {});
    throw err;
  });
  if (opts.migrate) await timed(log, 'migrate', () => migrateToLatest(database.db, log));
  const natsUrl = config.NATS_URL;
  const bus: Bus = natsUrl
    ? await timed(log, 'connect to NATS', () => JetStreamBus.connect(natsUrl, log)).catch(async (err: unknown) => {
      await database.close().catch(() => {});
      throw new StartupError(`cannot reach NATS at ${redactUrl(natsUrl)} (NATS_URL): ${reason(err)}. Start nats-server with -js, or unset NATS_URL for the in-process bus.`);
    })
    : new MemoryBus();
  // After both connections: an unreachable service is the first thing to fix, a schema behind the code the second.
  if (!opts.migrate) await refuseOlderSchema(database).catch(async (err) => {
    await bus.close().catch(() => {});
    throw err;
  });
  const t = topology(config.STREAM_PREFIX, config.EVENT_PARTITIONS);
  await ensureStreams(bus, t);
  const limiter: RateLimiter = config.REDIS_URL ? new RedisRateLimiter(config.REDIS_URL, log, `${config.STREAM_PREFIX || 'friction'}:rl:`) : new MemoryRateLimiter();
  log.info({ database: database.kind, bus: bus.kind, limiter: limiter.kind }, 'infrastructure ready');
  const keys = new KeyResolver(database.db, config.KEY_CACHE_TTL_MS);
  listenForRevocations(bus, t.keyRevokedSubject, keys);
  const sdkConfigs = new SdkConfigCache(database.db, config.SDK_CONFIG_CACHE_TTL_MS);
  listenForSdkConfigChanges(bus, t.sdkConfigChangedSubject, sdkConfigs);
  return { config, log, database, bus, limiter, keys, sdkConfigs, topology: t };
}

/** Runs a start-up step, logging its duration when it is slow enough to notice (a line per slow step). */
export async function timed<T>(log: Logger, step: string, fn: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  const out = await fn();
  const ms = Math.round(performance.now() - t0);
  if (ms >= 200) log.info({ step, ms }, `start-up: ${step} took ${ms} ms`);
  return out;
}

/** Database readiness: one round trip. */
export async function databaseReady(infra: Infra): Promise<boolean> {
  await sql`select 1`.execute(infra.database.db);
  return true;
}

/**
 * The embedded database's thread died (out of memory, an abort inside PGlite): logs it and exits 1 so the process
 * is restarted, rather than staying up with /healthz green and every database call answering 503. Batches accepted
 * but not yet stored were in the in-process bus, which a restart loses either way (see README, Embedded default).
 */
export function exitWhenDatabaseLost(database: Pick<DatabaseHandle, 'lost'>, log: Logger): void {
  void database.lost?.then((err) => {
    log.fatal({ err }, 'the embedded database thread died; exiting');
    process.exit(1);
  });
}

export async function closeInfra(infra: Infra): Promise<void> {
  await infra.bus.close().catch(() => {});
  await infra.limiter.close().catch(() => {});
  await infra.database.close().catch(() => {});
}
