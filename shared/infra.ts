import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import { openDatabase, type DatabaseHandle } from './db/connection.ts';
import { migrateToLatest } from './db/migrator.ts';
import type { Bus } from './bus/bus.ts';
import { JetStreamBus } from './bus/jetstream-bus.ts';
import { MemoryBus } from './bus/memory-bus.ts';
import { ensureStreams } from './bus/topology.ts';
import { topology, type Topology } from './contracts/subjects.ts';
import type { RateLimiter } from './limiter/limiter.ts';
import { MemoryRateLimiter } from './limiter/limiter.ts';
import { RedisRateLimiter } from './limiter/redis-limiter.ts';
import { KeyResolver, listenForRevocations } from './auth/key-resolver.ts';
import { sql } from 'kysely';

/** The infrastructure every role receives: built once by the entry point, closed in reverse order. */
export interface Infra {
  config: Config;
  log: Logger;
  database: DatabaseHandle;
  bus: Bus;
  limiter: RateLimiter;
  keys: KeyResolver;
  topology: Topology;
}

/**
 * Connects to the configured services, or the embedded defaults for those unset (PGlite+TimescaleDB,
 * in-process bus, in-process limiter). `migrate` runs migrations (single-process start, tests).
 */
export async function openInfra(config: Config, log: Logger, opts: { migrate: boolean; embeddedPath?: string } = { migrate: false }): Promise<Infra> {
  const database = await openDatabase({
    url: config.DATABASE_URL,
    dataDir: config.FRICTION_DATA_DIR,
    embeddedPath: opts.embeddedPath,
    connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
    statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
  });
  if (opts.migrate) await migrateToLatest(database.db, log);
  const bus: Bus = config.NATS_URL ? await JetStreamBus.connect(config.NATS_URL, log) : new MemoryBus();
  const t = topology(config.STREAM_PREFIX, config.EVENT_PARTITIONS);
  await ensureStreams(bus, t);
  const limiter: RateLimiter = config.REDIS_URL ? new RedisRateLimiter(config.REDIS_URL, log, `${config.STREAM_PREFIX || 'friction'}:rl:`) : new MemoryRateLimiter();
  log.info({ database: database.kind, bus: bus.kind, limiter: limiter.kind }, 'infrastructure ready');
  const keys = new KeyResolver(database.db, config.KEY_CACHE_TTL_MS);
  listenForRevocations(bus, t.keyRevokedSubject, keys);
  return { config, log, database, bus, limiter, keys, topology: t };
}

/** Database readiness: one round trip. */
export async function databaseReady(infra: Infra): Promise<boolean> {
  await sql`select 1`.execute(infra.database.db);
  return true;
}

export async function closeInfra(infra: Infra): Promise<void> {
  await infra.bus.close().catch(() => {});
  await infra.limiter.close().catch(() => {});
  await infra.database.close().catch(() => {});
}
