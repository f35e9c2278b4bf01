/**
 * Test-only: a whole Friction (every role on one port) against real services or the embedded defaults,
 * isolated per call: its own database cloned from the migrated template, its own stream prefix and Redis prefix.
 */
import type { Server } from 'node:http';
import { loadConfig, type Config } from '../../shared/config.ts';
import { createLogger } from '../../shared/logger.ts';
import { openInfra, closeInfra, type Infra } from '../../shared/infra.ts';
import { createTestDatabase } from '../../shared/testing/database.ts';
import { testServices, uniqueTestId } from '../../shared/testing/services.ts';
import { insertOrg, provisionSite } from '../../shared/tenancy/provision.ts';
import { ingestRole } from '../../ingest/main.ts';
import { apiRole } from '../../api/main.ts';
import { processorRole } from '../../processor/main.ts';
import { serveRoles, closeServer, type RoleHttp } from '../server.ts';

export interface TestTenant {
  orgId: string;
  siteId: string;
  publishableKey: string;
  secretKey: string;
}

export interface TestStack {
  baseUrl: string;
  infra: Infra;
  config: Config;
  databaseUrl: string | undefined;
  tenant: TestTenant;
  newTenant(): Promise<TestTenant>;
  stop(): Promise<void>;
}

export interface StackOptions {
  /** Embedded PGlite+TimescaleDB, in-process bus and limiter instead of the machine's services. */
  embedded?: boolean;
  /** Run the processor in this process (default true). */
  processor?: boolean;
  /** Extra environment (e.g. a NATS_URL of a private nats-server, INGEST_BODY_LIMIT_BYTES). */
  env?: Record<string, string>;
  now?: () => number;
}

export async function startTestStack(opts: StackOptions = {}): Promise<TestStack> {
  const id = uniqueTestId();
  const database = opts.embedded ? undefined : await createTestDatabase('stack');
  const config = loadConfig(
    {},
    {
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: database?.url,
      NATS_URL: opts.embedded ? undefined : testServices.natsUrl,
      REDIS_URL: opts.embedded ? undefined : testServices.redisUrl,
      STREAM_PREFIX: opts.embedded ? '' : `t${id}`,
      PROCESSOR_FETCH_EXPIRES_MS: '1000',
      ...opts.env,
    },
  );
  const log = createLogger(config.LOG_LEVEL, { test: id });
  const infra = await openInfra(config, log, { migrate: opts.embedded === true, embeddedPath: opts.embedded ? 'memory://' : undefined });
  const newTenant = async (): Promise<TestTenant> => {
    const orgId = await insertOrg(infra.database.db, { name: `org ${uniqueTestId()}`, plan: 'pro' });
    const site = await provisionSite(infra.database.db, { orgId, name: 'test site', url: 'https://shop.example' });
    return { orgId, siteId: site.siteId, publishableKey: site.publishableKey, secretKey: site.secretKey };
  };
  const tenant = await newTenant();
  const roles: RoleHttp[] = [ingestRole(infra), apiRole(infra)];
  const processor = opts.processor === false ? undefined : await processorRole(infra, { now: opts.now }).start();
  if (processor) roles.push(processor.http);
  const server: Server = await serveRoles('test', roles, log, 0, '127.0.0.1');
  const addr = server.address();
  const baseUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  return {
    baseUrl,
    infra,
    config,
    databaseUrl: database?.url,
    tenant,
    newTenant,
    async stop() {
      await closeServer(server);
      await processor?.running.stop();
      if (!opts.embedded) await infra.bus.deleteStream(infra.topology.eventsStream).catch(() => {});
      if (!opts.embedded) await infra.bus.deleteStream(infra.topology.commandsStream).catch(() => {});
      await closeInfra(infra);
      await database?.drop();
    },
  };
}
