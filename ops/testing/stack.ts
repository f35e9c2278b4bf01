/**
 * Test-only: a whole Friction (every role on one port) against real services or the embedded defaults,
 * isolated per call: its own database cloned from the migrated template, its own stream prefix and Redis prefix.
 */
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { loadConfig, type Config } from '../../shared/config.ts';
import { createLogger } from '../../shared/logger.ts';
import { openInfra, closeInfra, type Infra } from '../../shared/infra.ts';
import { createTestDatabase } from '../../shared/testing/database.ts';
import { embeddedTemplate } from '../../shared/testing/embedded-template.ts';
import { testServices, uniqueTestId } from '../../shared/testing/services.ts';
import { insertOrg, provisionSite } from '../../shared/tenancy/provision.ts';
import { createMember, type Role } from '../../shared/tenancy/accounts.ts';
import { hashPassword } from '../../shared/auth/passwords.ts';
import { startSession } from '../../shared/auth/sessions.ts';
import { InstanceKeys } from '../../shared/auth/instance-keys.ts';
import type Router from '@koa/router';
import { ingestRole } from '../../ingest/main.ts';
import { apiRole } from '../../api/main.ts';
import { processorRole } from '../../processor/main.ts';
import { dispatcherRole } from '../../processor/dispatcher/main.ts';
import type { Dispatcher } from '../../processor/dispatcher/dispatcher.ts';
import type { DegradationMonitor } from '../../processor/dispatcher/degradation-monitor.ts';
import { serveRoles, closeServer, type RoleHttp } from '../server.ts';
import { connectionLimits } from '../../shared/http/connection-guard.ts';
import { useResource } from '../../shared/testing/lifecycle.ts';
import { getJson } from '../../shared/testing/http-client.ts';
import type { TestFn } from 'ava';

export interface TestUser {
  userId: string;
  email: string;
  password: string;
  /** A user token for the tenant's org. */
  token: string;
}

export interface TestTenant {
  orgId: string;
  siteId: string;
  publishableKey: string;
  secretKey: string;
  /** The org's owner. */
  owner: TestUser;
}

export interface TestStack {
  baseUrl: string;
  infra: Infra;
  config: Config;
  databaseUrl: string | undefined;
  tenant: TestTenant;
  newTenant(): Promise<TestTenant>;
  /** Runs the processor's periodic work now (window eviction, rescoring, nightly triage when due). */
  tick(): Promise<void>;
  /** A new user of `tenant`'s org with `role`, and a token. */
  newUser(tenant: Pick<TestTenant, 'orgId'>, role: Role): Promise<TestUser>;
  /** The dispatcher, when started (`dispatcher: true`). */
  dispatcher: Dispatcher | undefined;
  /** Its degradation monitor (checks every 30 s; tests call check()). */
  monitor: DegradationMonitor | undefined;
  /** Every router the stack serves (ops routes excluded): what the OpenAPI coverage test walks. */
  routers: Router[];
  stop(): Promise<void>;
}

export interface StackOptions {
  /** Embedded PGlite+TimescaleDB, in-process bus and limiter instead of the machine's services. */
  embedded?: boolean;
  /** An empty PostgreSQL database to use (migrated here) instead of a clone of the template (fault tests). */
  databaseUrl?: string;
  /** Run the processor in this process (default true). */
  processor?: boolean;
  /** Extra environment (e.g. a NATS_URL of a private nats-server, INGEST_BODY_LIMIT_BYTES). */
  env?: Record<string, string>;
  now?: () => number;
  /** Run a dispatcher in this process (default false); `random` fixes its jitter. */
  dispatcher?: boolean;
  random?: () => number;
}

export async function startTestStack(opts: StackOptions = {}): Promise<TestStack> {
  const id = uniqueTestId();
  const database = opts.embedded || opts.databaseUrl ? undefined : await createTestDatabase('stack');
  const config = loadConfig(
    {},
    {
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: opts.databaseUrl ?? database?.url,
      NATS_URL: opts.embedded ? undefined : testServices.natsUrl,
      REDIS_URL: opts.embedded ? undefined : testServices.redisUrl,
      STREAM_PREFIX: opts.embedded ? '' : `t${id}`,
      PROCESSOR_FETCH_EXPIRES_MS: '1000',
      // API rate limits out of the way (tests make many requests per org); the limit tests set their own.
      READ_RATE_LIMIT_PER_MIN: '1000000',
      WRITE_RATE_LIMIT_PER_MIN: '1000000',
      GUIDE_RATE_LIMIT_PER_MIN: '1000000',
      AUTH_RATE_LIMIT_PER_MIN: '1000000',
      UNAUTH_RATE_LIMIT_PER_MIN: '1000000',
      LOGIN_ATTEMPTS_PER_ACCOUNT: '1000000',
      // Ingest's per-key limit too: a sender that never pauses outruns 10,000 a minute on a fast machine.
      INGEST_RATE_LIMIT_PER_MIN: '100000000',
      // Ingest in the test process shares its event loop with the processor, the API and the test itself: a busy
      // moment there is not ingest's overload (shedding has its own tests: ingest/admission.test.ts and ops/bench/shed.int.test.ts).
      INGEST_LATENCY_TARGET_MS: '0',
      // The cheapest scrypt cost: tests create many users, and the cost is irrelevant to what they check.
      PASSWORD_SCRYPT_N: '1024',
      // Each stack its own secret: no secret file written into the working directory.
      FRICTION_SECRET: randomBytes(32).toString('hex'),
      ...opts.env,
    },
  );
  const log = createLogger(config.LOG_LEVEL, { test: id });
  const infra = await openInfra(config, log, {
    migrate: opts.embedded === true || opts.databaseUrl !== undefined,
    embeddedPath: opts.embedded ? 'memory://' : undefined,
    // A copy of the migrated template, as the PostgreSQL database above is: not a new database migrated again.
    embeddedSeed: opts.embedded ? await embeddedTemplate() : undefined,
  });
  const instanceKeys = new InstanceKeys(infra.database.db, config);
  const newUser = async (tenant: Pick<TestTenant, 'orgId'>, role: Role): Promise<TestUser> => {
    const email = `${role}-${uniqueTestId()}@test.example`;
    const password = `pw-${uniqueTestId()}-${uniqueTestId()}`;
    const userId = await createMember(infra.database.db, {
      orgId: tenant.orgId,
      email,
      passwordHash: await hashPassword(password, config.PASSWORD_SCRYPT_N),
      role,
    });
    const { token } = await startSession(
      infra.database.db,
      instanceKeys,
      { userId, orgId: tenant.orgId },
      { tokenTtlSec: config.JWT_TTL_SECONDS, sessionMaxSec: config.SESSION_MAX_SECONDS },
      new Date(),
    );
    return { userId, email, password, token };
  };
  const newTenant = async (): Promise<TestTenant> => {
    const orgId = await insertOrg(infra.database.db, { name: `org ${uniqueTestId()}`, plan: 'pro' });
    const site = await provisionSite(infra.database.db, { orgId, name: 'test site', url: 'https://shop.example' });
    return {
      orgId,
      siteId: site.siteId,
      publishableKey: site.publishableKey,
      secretKey: site.secretKey,
      owner: await newUser({ orgId }, 'owner'),
    };
  };
  const tenant = await newTenant();
  const api = apiRole(infra);
  const roles: RoleHttp[] = [ingestRole(infra), api];
  const processor = opts.processor === false ? undefined : await processorRole(infra, { now: opts.now }).start();
  if (processor) roles.push(processor.http);
  const dispatcher = opts.dispatcher
    ? await dispatcherRole(infra, { now: opts.now, random: opts.random }).start()
    : undefined;
  const server: Server = await serveRoles('test', roles, log, 0, '127.0.0.1', {
    trustedProxies: config.TRUSTED_PROXIES,
    metricsToken: config.METRICS_TOKEN,
    connections: connectionLimits(config),
  });
  const addr = server.address();
  const baseUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  return {
    baseUrl,
    infra,
    config,
    databaseUrl: opts.databaseUrl ?? database?.url,
    tenant,
    dispatcher: dispatcher?.running.dispatcher,
    monitor: dispatcher?.running.monitor,
    newTenant,
    newUser,
    routers: roles.flatMap((r) => r.routers),
    async tick() {
      await processor?.running.tick?.();
    },
    async stop() {
      await closeServer(server);
      await api.stop();
      await processor?.running.stop();
      await dispatcher?.running.stop();
      if (!opts.embedded) await infra.bus.deleteStream(infra.topology.eventsStream).catch(() => {});
      if (!opts.embedded) await infra.bus.deleteStream(infra.topology.notifyStream).catch(() => {});
      await closeInfra(infra);
      await database?.drop();
    },
  };
}

/** The stack the tests of a file share: started before them, stopped after them (see `useResource`). */
export function useStack<C>(test: TestFn<C>, opts: StackOptions = {}): TestStack {
  return useResource(
    test,
    () => startTestStack(opts),
    (stack) => stack.stop(),
  );
}

/** The headers of a read with `tenant`'s secret key. */
export const bearer = (tenant: Pick<TestTenant, 'secretKey'>): Record<string, string> => ({
  authorization: `Bearer ${tenant.secretKey}`,
});

/** A new tenant of `stack`, the headers of its secret key (`auth`), and `read(path)`: a GET on the stack with them. */
export async function newReader(stack: TestStack) {
  const tenant = await stack.newTenant();
  const auth = bearer(tenant);
  return { tenant, auth, read: (path: string) => getJson(`${stack.baseUrl}${path}`, auth) };
}
