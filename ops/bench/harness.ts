/** Bench plumbing shared by the benchmarks: scratch databases and role processes. */
import type { ChildProcess } from 'node:child_process';
import { kill, spawnRole as spawnProcess } from '../../shared/testing/processes.ts';
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';

export const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export function withDb(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

export async function admin(q: string): Promise<void> {
  const c = new pg.Client({ connectionString: ADMIN_URL });
  await c.connect();
  try {
    await c.query(q);
  } finally {
    await c.end();
  }
}

/**
 * BENCH_PROFILE_DIR=dir writes a V8 CPU profile of every role process there (open it in Chrome DevTools);
 * BENCH_NODE_ARGS passes Node/V8 flags to every role process (space-separated, for example `--trace-gc`).
 */
export function spawnRole(args: string[], env: Record<string, string>): ChildProcess {
  const prof = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
  const flags = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  return spawnProcess(args, env, { stdout: 'pipe', nodeArgs: [...prof, ...flags] });
}

/**
 * CPU seconds (user + system) a process has used so far, from /proc (Linux; NaN elsewhere). Read around a load
 * run it gives CPU per request, which is steadier than throughput on a machine the load generator shares.
 */
export function processCpuSeconds(pid: number | undefined, file = `/proc/${pid}/stat`): number {
  try {
    // Fields after the parenthesized command name; utime and stime are the 12th and 13th of them, in clock ticks.
    const fields = readFileSync(file, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** Resident memory of a process in MiB (Linux /proc; NaN elsewhere). */
export function processRssMiB(pid: number | undefined): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/**
 * A process's CPU seconds so far split by thread (Linux; NaN elsewhere): its main thread (for Node, the JavaScript
 * thread, with the garbage collector's pauses) and every other thread (V8's concurrent compilers and collector
 * helpers, libuv's pool).
 */
export function threadCpuSeconds(pid: number | undefined): { main: number; helpers: number } {
  try {
    let main = 0;
    let helpers = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const s = processCpuSeconds(Number(tid), `/proc/${pid}/task/${tid}/stat`);
      if (tid === String(pid)) main += s;
      else if (Number.isFinite(s)) helpers += s;
    }
    return { main, helpers };
  } catch {
    return { main: Number.NaN, helpers: Number.NaN };
  }
}

/**
 * What the scheduler did to a process's threads so far (Linux; zeros elsewhere), from /proc/<pid>/task/<tid>/schedstat
 * and status: seconds on a CPU, seconds runnable but waiting for one (the run queue: what an oversubscribed machine
 * adds), and the switches the thread did not ask for (preemptions). The main thread apart from the rest.
 */
interface SchedStat {
  runSeconds: number;
  waitSeconds: number;
  preempted: number;
}
export function threadSchedStats(pid: number | undefined): { main: SchedStat; helpers: SchedStat } {
  const zero = (): SchedStat => ({ runSeconds: 0, waitSeconds: 0, preempted: 0 });
  const out = { main: zero(), helpers: zero() };
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const dir = `/proc/${pid}/task/${tid}`;
      const [run, wait] = readFileSync(`${dir}/schedstat`, 'utf8').split(' ').map(Number);
      const preempted = Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`${dir}/status`, 'utf8'))?.[1]);
      const s = tid === String(pid) ? out.main : out.helpers;
      s.runSeconds += run / 1e9;
      s.waitSeconds += wait / 1e9;
      s.preempted += preempted;
    }
  } catch {
    // a thread that ended between the listing and the read: its figures are simply not counted
  }
  return out;
}

/** The machine's CPU seconds so far (all cores, from /proc/stat): busy (user, nice, system, irq) and stolen by the hypervisor. */
export function machineCpuSeconds(): { busy: number; steal: number; idle: number } {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, idle, iowait, irq, softirq, steal] = f;
    return { busy: (user + nice + system + irq + softirq) / 100, steal: steal / 100, idle: (idle + iowait) / 100 };
  } catch {
    return { busy: Number.NaN, steal: Number.NaN, idle: Number.NaN };
  }
}

/**
 * CPU seconds used so far by each PostgreSQL backend connected to the database `db` is connected to, by pid
 * (read from /proc: the server runs on this machine in every bench). Two readings around a phase give the
 * database's share of that phase's work, which the client process's own CPU does not show.
 */
export async function databaseCpuSeconds(db: Kysely<Database>): Promise<Map<number, number>> {
  const { rows } = await sql<{
    pid: number;
  }>`select pid from pg_stat_activity where datname = current_database()`.execute(db);
  return new Map(
    rows.map((r) => [r.pid, processCpuSeconds(r.pid)]).filter(([, s]) => Number.isFinite(s)) as [number, number][],
  );
}

/** CPU seconds the backends used between two readings (a backend that connected in between counts from zero). */
export function databaseCpuBetween(before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>): number {
  let s = 0;
  for (const [pid, cpu] of after) s += cpu - (before.get(pid) ?? 0);
  return s;
}

// The benchmarks wait for and stop their role processes as the tests do.
export { kill as stop, waitReady } from '../../shared/testing/processes.ts';

/** A scratch database (migrated) and a JetStream connection for one bench run; `close` drops everything. */
export async function openBenchEnvironment(natsUrl: string) {
  const { randomUUID } = await import('node:crypto');
  const { openDatabase } = await import('../../shared/db/connection.ts');
  const { migrateToLatest } = await import('../../shared/db/migrator.ts');
  const { JetStreamBus } = await import('../../shared/bus/jetstream-bus.ts');
  const { createLogger } = await import('../../shared/logger.ts');
  const { loadConfig } = await import('../../shared/config.ts');
  const id = randomUUID().slice(0, 8);
  const dbName = `friction_bench_${id}`;
  // BENCH_TEMPLATE_DATABASE: a copy of a database seeded before (a bench whose seeding outlasts its run on a busy
  // machine: the alerts bench's tick part at 10,000 pages × 8 weeks); migrated on top like a fresh one.
  const template = process.env.BENCH_TEMPLATE_DATABASE;
  await admin(`create database ${dbName}${template ? ` template ${template}` : ''}`);
  const dbUrl = withDb(ADMIN_URL, dbName);
  const handle = await openDatabase({ url: dbUrl, dataDir: '' });
  const bus = await JetStreamBus.connect(natsUrl, createLogger('silent'));
  const children: ChildProcess[] = [];
  const prefix = `bench${id}`;
  await migrateToLatest(handle.db);
  return {
    db: handle.db,
    dbUrl,
    bus,
    prefix,
    children,
    /** The config of roles run in the bench's process against this environment, ingest's rate limit out of the way; `env` over it. */
    config: (env: Record<string, string> = {}) =>
      loadConfig(
        {},
        {
          DATABASE_URL: dbUrl,
          NATS_URL: natsUrl,
          STREAM_PREFIX: prefix,
          LOG_LEVEL: 'warn',
          PORT: '0',
          HOST: '127.0.0.1',
          INGEST_RATE_LIMIT_PER_MIN: '100000000',
          PROCESSOR_FETCH_EXPIRES_MS: '200',
          ...env,
        },
      ),
    async close() {
      for (const c of children) await kill(c);
      for (const s of ['EVENTS', 'COMMANDS', 'NOTIFY', 'RAW']) await bus.deleteStream(`${prefix}_${s}`).catch(() => {});
      await bus.close();
      await handle.close();
      await admin(`drop database if exists ${dbName} with (force)`).catch(() => {});
    },
  };
}
