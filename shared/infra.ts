import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import { openDatabase, type DatabaseHandle } from './db/connection.ts';
import { migrateToLatest, schemaStatus } from './db/migrator.ts';
import type { Bus } from './bus/bus.ts';
import { JetStreamBus } from './bus/jetstream-bus.ts';
import { MemoryBus } from './bus/memory-bus.ts';
import { DurableBus } from './bus/durable-bus.ts';
import { ensureStreams } from './bus/topology.ts';
import { topology, type Topology } from './contracts/subjects.ts';
import type { RateLimiter } from './limiter/limiter.ts';
import { MemoryRateLimiter } from './limiter/limiter.ts';
import { RedisRateLimiter } from './limiter/redis-limiter.ts';
import { KeyResolver, listenForRevocations } from './auth/key-resolver.ts';
import { SdkConfigCache, listenForSdkConfigChanges } from './tenancy/sdk-config-cache.ts';
import { sql } from 'kysely';
import { join } from 'node:path';
import type { ReadinessCheck } from './http/ops-routes.ts';

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
 * What went wrong connecting to PostgreSQL, in words and with what to do: SQLSTATE codes and errno names alone
 * (3D000, 28000, ECONNREFUSED) send a newcomer to a search engine.
 */
export function describeDatabaseError(err: unknown, url: string): string {
  const e = err as { code?: string; message?: string; errors?: { code?: string }[] };
  const code = e?.code ?? e?.errors?.[0]?.code;
  let u: URL | undefined;
  try {
    u = new URL(url);
  } catch {
    /* described by the generic line */
  }
  const database = decodeURIComponent(u?.pathname.replace(/^\//, '') || 'postgres');
  const user = decodeURIComponent(u?.username || 'the current OS user');
  const where = `${u?.hostname ?? '?'}:${u?.port || '5432'}`;
  switch (code) {
    case '3D000':
      return `database "${database}" does not exist on ${where}: create it (createdb -h ${u?.hostname} ${database}) or fix the URL's path`;
    case '28000':
      return /role .* does not exist/.test(e.message ?? '')
        ? `role "${user}" does not exist on ${where}: create it (createuser) or fix the URL's user`
        : `${where} refused user "${user}" (pg_hba.conf has no entry for this host, user and database)`;
    case '28P01':
      return `password authentication failed for user "${user}": fix the URL's password`;
    case 'ECONNREFUSED':
      return `connection refused by ${where}: nothing listens there (is PostgreSQL running, and the host and port right?)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `the host ${u?.hostname} does not resolve`;
    case 'ETIMEDOUT':
      return `no answer from ${where} (a firewall, or the wrong host)`;
    default:
      return reason(err);
  }
}

/** One query; a failure becomes a StartupError naming DATABASE_URL. */
export async function checkDatabase(db: DatabaseHandle['db'], url: string): Promise<void> {
  try {
    await sql`select 1`.execute(db);
  } catch (err) {
    throw new StartupError(
      `cannot reach the database at ${redactUrl(url)} (DATABASE_URL): ${describeDatabaseError(err, url)}`,
    );
  }
}

/**
 * Waits for the database to answer, up to `timeoutMs` (containers start in any order): one log line per attempt
 * that failed, then a StartupError naming DATABASE_URL.
 */
export async function waitForDatabase(
  db: DatabaseHandle['db'],
  url: string,
  timeoutMs: number,
  log: Logger,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await checkDatabase(db, url);
    } catch (err) {
      if (Date.now() + 1000 > until) throw err;
      log.warn({ attempt, url: redactUrl(url), err }, 'database not reachable yet; retrying in 1 s');
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
export async function openInfra(
  config: Config,
  log: Logger,
  opts: { migrate: boolean; embeddedPath?: string; embeddedSeed?: string } = { migrate: false },
): Promise<Infra> {
  const database = await timed(
    log,
    config.DATABASE_URL ? 'connect to the database' : 'open the embedded database',
    () =>
      openDatabase({
        url: config.DATABASE_URL,
        dataDir: config.FRICTION_DATA_DIR,
        embeddedPath: opts.embeddedPath,
        embeddedSeed: opts.embeddedSeed,
        connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
        statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
        preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
      }),
  );
  if (config.DATABASE_URL)
    await checkDatabase(database.db, config.DATABASE_URL).catch(async (err) => {
      await database.close().catch(() => {});
      throw err;
    });
  if (opts.migrate) await timed(log, 'migrate', () => migrateToLatest(database.db, log));
  const natsUrl = config.NATS_URL;
  const bus: Bus = natsUrl
    ? await timed(log, 'connect to NATS', () =>
        JetStreamBus.connect(natsUrl, log, 'friction', config.NATS_STREAM_REPLICAS),
      ).catch(async (err: unknown) => {
        await database.close().catch(() => {});
        throw new StartupError(
          `cannot reach NATS at ${redactUrl(natsUrl)} (NATS_URL): ${reason(err)}. Start nats-server with -js, or unset NATS_URL for the in-process bus.`,
        );
      })
    : // The embedded default logs its bus beside its database (same directory lock): what was answered 202 survives
      // a stop and a crash. A test's database elsewhere (embeddedPath) or on a server keeps the bus in memory.
      database.kind === 'pglite' && !opts.embeddedPath
      ? await timed(log, 'replay the bus log', () => DurableBus.open(join(config.FRICTION_DATA_DIR, 'bus'), log)).catch(
          async (err: unknown) => {
            await database.close().catch(() => {});
            throw err;
          },
        )
      : new MemoryBus();
  // After every service answered, so an unreachable one is named first.
  if (!opts.migrate)
    await refuseBehindSchema(database, config, log).catch(async (err: unknown) => {
      await bus.close().catch(() => {});
      throw err;
    });
  const t = topology(config.STREAM_PREFIX, config.EVENT_PARTITIONS);
  await ensureStreams(bus, t);
  const limiter: RateLimiter = config.REDIS_URL
    ? new RedisRateLimiter(config.REDIS_URL, log, `${config.STREAM_PREFIX || 'friction'}:rl:`)
    : new MemoryRateLimiter();
  log.info({ database: database.kind, bus: bus.kind, limiter: limiter.kind }, 'infrastructure ready');
  const keys = new KeyResolver(database.db, config.KEY_CACHE_TTL_MS);
  listenForRevocations(bus, t.keyRevokedSubject, keys);
  const sdkConfigs = new SdkConfigCache(database.db, config.SDK_CONFIG_CACHE_TTL_MS);
  listenForSdkConfigChanges(bus, t.sdkConfigChangedSubject, sdkConfigs);
  return { config, log, database, bus, limiter, keys, sdkConfigs, topology: t };
}

/**
 * A role on a database older than its code would fail on its first query to a missing table or column, as an
 * error logged every second or a stack trace: it says so once and stops instead. A database newer than the code
 * (a rolling upgrade's migrate ran first) is only logged: migrations add, so the older code keeps working.
 */
async function refuseBehindSchema(database: DatabaseHandle, config: Config, log: Logger): Promise<void> {
  const { pending, unknown } = await schemaStatus(database.db);
  if (unknown.length)
    log.warn(
      { unknown },
      'the database has migrations this version of Friction does not know (a newer version migrated it)',
    );
  if (!pending.length) return;
  await database.close().catch(() => {});
  const where = config.DATABASE_URL
    ? `the database at ${redactUrl(config.DATABASE_URL)}`
    : `the embedded database in ${config.FRICTION_DATA_DIR}`;
  throw new StartupError(
    `${where} is behind this version of Friction (${pending.length} migration${pending.length > 1 ? 's' : ''} not applied, from ${pending[0]}): run \`friction migrate\` first`,
  );
}

/** Runs a start-up step, logging its duration when it is slow enough to notice (a line per slow step). */
export async function timed<T>(log: Logger, step: string, fn: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  const out = await fn();
  const ms = Math.round(performance.now() - t0);
  if (ms >= 200) log.info({ step, ms }, `start-up: ${step} took ${ms} ms`);
  return out;
}

/** Redis, on the roles that limit rates (ingest, api): reported by /readyz, never making the process unready. */
export function limiterReadiness(infra: Infra): ReadinessCheck[] {
  const limiter = infra.limiter;
  return limiter instanceof RedisRateLimiter ? [['redis', () => limiter.healthy(), { soft: true }]] : [];
}

/** Database readiness: one round trip. */
export async function databaseReady(infra: Infra): Promise<boolean> {
  await sql`select 1`.execute(infra.database.db);
  return true;
}

/**
 * The embedded database's thread died (out of memory, an abort inside PGlite): logs it and exits 1 so the process
 * is restarted, rather than staying up with /healthz green and every database call answering 503. Batches accepted
 * but not yet stored were in the in-process bus, which a restart loses either way (see docs/architecture.md, Embedded default).
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
