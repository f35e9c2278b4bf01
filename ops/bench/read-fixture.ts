/**
 * What the read benches (`query`, `export`) share: a database of `friction demo --events` data (generated into a new
 * scratch database, or one filled before with `--reuse <database> --key <svc_sec_…>`), and an API role process on it.
 */
import type { ChildProcess } from 'node:child_process';
import { sql } from 'kysely';
import { openDatabase, type DatabaseHandle } from '../../shared/db/connection.ts';
import { migrateToLatest } from '../../shared/db/migrator.ts';
import { createLogger } from '../../shared/logger.ts';
import { insertOrg, provisionSite } from '../../shared/tenancy/provision.ts';
import { writeDemoData } from '../demo-data.ts';
import { ADMIN_URL, admin, spawnRole, stop, waitReady, withDb } from './harness.ts';
import { Progress } from './progress.ts';
import { freePort } from '../../shared/testing/processes.ts';

/** `--name value` from the bench's arguments, or `def`. */
export const arg = (args: string[], name: string, def: string): string => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1] : def;
};

export interface ReadBenchDatabase {
  name: string;
  url: string;
  handle: DatabaseHandle;
  site: { siteId: string; secretKey: string };
  /** The site's events. */
  events: number;
  /** Closes the handle; drops the database unless it was reused or `keep`. */
  close(keep: boolean): Promise<void>;
}

/**
 * A new scratch database `friction_bench_<label>_<events>_…` filled by the generator with `events` events for one
 * site, vacuumed and checkpointed; or, with `reuse`, that database's busiest site read with `key`.
 */
export async function readBenchDatabase(
  label: string,
  events: number,
  reuse?: { database: string; key: string },
): Promise<ReadBenchDatabase> {
  const name = reuse?.database ?? `friction_bench_${label}_${events}_${Date.now().toString(36)}`;
  if (!reuse) await admin(`create database ${name}`);
  const url = withDb(ADMIN_URL, name);
  const handle = await openDatabase({ url, dataDir: '', statementTimeoutMs: 0 });
  const close = async (keep: boolean) => {
    await handle.close();
    if (!keep && !reuse) await admin(`drop database if exists ${name} with (force)`).catch(() => {});
  };
  try {
    if (reuse) {
      const top = await handle.db
        .selectFrom('sessions')
        .select(['site_id', sql<number>`count(*)::int`.as('n')])
        .groupBy('site_id')
        .orderBy('n', 'desc')
        .limit(1)
        .executeTakeFirstOrThrow();
      const stored = await handle.db
        .selectFrom('events')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('site_id', '=', top.site_id)
        .executeTakeFirstOrThrow();
      process.stdout.write(
        `reusing ${name}: site ${top.site_id}, ${stored.n.toLocaleString('en-US')} events, ${top.n.toLocaleString('en-US')} sessions\n`,
      );
      return { name, url, handle, site: { siteId: top.site_id, secretKey: reuse.key }, events: stored.n, close };
    }
    await migrateToLatest(handle.db);
    const orgId = await insertOrg(handle.db, { name: 'bench', plan: 'enterprise' });
    const site = await provisionSite(handle.db, { orgId, name: 'bench shop', url: 'https://shop.example' });
    const progress = new Progress(`data ${events.toLocaleString('en-US')}`, events);
    const report = await writeDemoData(
      handle,
      url,
      { events, siteId: site.siteId, progress: (n) => progress.updateRate(n, 'events') },
      createLogger('silent'),
    );
    const rate = Math.round(report.events / report.writeSeconds).toLocaleString('en-US');
    progress.done(`${rate} events/s`);
    process.stdout.write(
      `generator: ${report.events.toLocaleString('en-US')} events, ${report.sessions.toLocaleString('en-US')} sessions in ${report.writeSeconds.toFixed(1)} s (${rate} events/s); derived in ${report.deriveSeconds.toFixed(1)} s\n`,
    );
    // As autovacuum would have (all-visible pages: index-only scans skip the heap), and a checkpoint so the bulk load's
    // dirty pages are not written out by the checkpointer while the routes are timed.
    await sql`vacuum analyze`.execute(handle.db);
    await sql`checkpoint`.execute(handle.db);
    return { name, url, handle, site, events, close };
  } catch (err) {
    await close(false);
    throw err;
  }
}

/** An API role process on `dbUrl`, ready, with read limits out of the way; `env` adds or overrides settings. */
export async function startBenchApi(
  dbUrl: string,
  env: Record<string, string> = {},
): Promise<{ api: ChildProcess; base: string }> {
  const port = await freePort();
  const api = spawnRole(['ops/cli.ts', 'api'], {
    DATABASE_URL: dbUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    // The API role of a split deployment needs its bus and cache: the machine's own services.
    NATS_URL: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    READ_RATE_LIMIT_PER_MIN: '100000000',
    SCREENSHOTS: 'off',
    ...env,
  });
  api.stdout?.resume();
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitReady(`${base}/readyz`, 120_000);
  } catch (err) {
    await stop(api);
    throw err;
  }
  return { api, base };
}
