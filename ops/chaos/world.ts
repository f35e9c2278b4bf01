/**
 * The chaos suite's own services (issue 32): a private nats-server, PostgreSQL (initdb/pg_ctl) and redis-server on
 * free ports, so scenarios may kill, pause and restart them; ingest and processors as separate processes of the CLI.
 */
import { freePort } from '../../shared/testing/processes.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startPrivateNats } from '../../shared/testing/nats-server.ts';
import { startPrivatePostgres } from '../../shared/testing/postgres-server.ts';

const CLI = fileURLToPath(new URL('../cli.ts', import.meta.url));

export interface Role {
  proc: ChildProcess;
  port: number;
}

/** Resolves when `fn` returns a value other than undefined; throws after `ms`. */
export async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 60_000, every = 100): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, every));
  }
}

/** The redis-server binary (on PATH unless REDIS_SERVER_BIN says where). */
const redisServer = (): string => process.env.REDIS_SERVER_BIN || ['redis', 'server'].join('-');

async function startRedis() {
  const port = await freePort();
  let proc: ChildProcess | undefined;
  const start = async () => {
    proc = spawn(redisServer(), ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    await until('redis listening', async () => {
      const { createConnection } = await import('node:net');
      return new Promise<true | undefined>((resolve) => {
        const s = createConnection(port, '127.0.0.1', () => (s.end(), resolve(true)));
        s.on('error', () => resolve(undefined));
      });
    });
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    start,
    async stop() {
      const p = proc;
      if (!p || p.exitCode !== null) return;
      await new Promise<void>((r) => {
        p.once('exit', () => r());
        p.kill('SIGKILL');
      });
    },
  };
}

const exited = (p: ChildProcess) => p.exitCode !== null || p.signalCode !== null;

export async function killRole(r: Role | undefined, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (!r || exited(r.proc)) return;
  await new Promise<void>((resolve) => {
    r.proc.once('exit', () => resolve());
    r.proc.kill(signal);
    if (signal !== 'SIGKILL') setTimeout(() => r.proc.kill('SIGKILL'), 15_000).unref();
  });
}

export async function startChaosWorld(opts: { leaseTtlMs?: number } = {}) {
  const [nats, postgres, redis] = await Promise.all([startPrivateNats(), startPrivatePostgres(), startRedis()]);
  const dataDir = mkdtempSync(join(tmpdir(), 'friction-chaos-'));
  const env: Record<string, string> = {
    DATABASE_URL: postgres.url,
    NATS_URL: nats.url,
    REDIS_URL: redis.url,
    FRICTION_DATA_DIR: dataDir,
    FRICTION_SECRET: 'chaos-suite-secret-chaos-suite-secret-0123456789',
    STREAM_PREFIX: 'chaos',
    PROCESSOR_PARTITIONS: 'auto',
    PROCESSOR_LEASE_TTL_MS: String(opts.leaseTtlMs ?? 2000),
    // What a killed processor had fetched comes back after this.
    PROCESSOR_ACK_WAIT_MS: '3000',
    PROCESSOR_BATCH_WINDOW_MS: '50',
    HOST: '127.0.0.1',
    LOG_LEVEL: process.env.CHAOS_LOG_LEVEL ?? 'error',
  };
  const migrate = spawn(process.execPath, [CLI, 'migrate'], { env: { ...process.env, ...env }, stdio: 'ignore' });
  const code = await new Promise<number | null>((r) => migrate.once('exit', (c) => r(c)));
  if (code !== 0) throw new Error(`friction migrate exited ${code}`);
  const db = new pg.Pool({ connectionString: postgres.url, max: 2 });
  db.on('error', () => {}); // the suite kills the server under it
  const roles: Role[] = [];
  /** Starts a role on the suite's services; `extra` overrides settings (another NATS, another stream prefix). */
  const spawnRole = async (role: 'ingest' | 'processor', extra: Record<string, string> = {}): Promise<Role> => {
    const port = await freePort();
    const proc = spawn(process.execPath, [CLI, role], {
      env: { ...process.env, ...env, ...extra, PORT: String(port) },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const r = { proc, port };
    roles.push(r);
    await until(`${role} ready`, async () =>
      (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200 ? true : undefined,
    );
    return r;
  };
  return {
    nats,
    postgres,
    redis,
    db,
    env,
    spawnRole,
    async query<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
      return (await db.query<T>(text, values)).rows;
    },
    async close() {
      await Promise.all(roles.map((r) => killRole(r)));
      await db.end().catch(() => {});
      await Promise.all([nats.dispose(), postgres.dispose(), redis.stop()]);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export type ChaosWorld = Awaited<ReturnType<typeof startChaosWorld>>;
