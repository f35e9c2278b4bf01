import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './processes.ts';

/** The newest PostgreSQL server binaries installed the Debian way (`/usr/lib/postgresql/<major>/bin`). */
function postgresBin(): string {
  if (process.env.PG_BIN_DIR) return process.env.PG_BIN_DIR;
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root)
    ? readdirSync(root)
        .filter((d) => /^\d+$/.test(d))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const dir = majors.map((m) => join(root, m, 'bin')).find((d) => existsSync(join(d, 'pg_ctl')));
  if (!dir) throw new Error('no PostgreSQL server binaries found (set PG_BIN_DIR)');
  return dir;
}

/**
 * Test-only: a private PostgreSQL cluster (initdb + pg_ctl) on a free loopback port, so a fault test can stop and
 * restart "the" database without touching the machine's shared server. PostgreSQL refuses to run as root: as
 * root the cluster is created and run as the `postgres` user.
 */
export async function startPrivatePostgres() {
  const bin = postgresBin();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'friction-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  // Asynchronous, so the processor under test keeps running while the server starts or stops.
  const run = async (cmd: string, args: string[]) => {
    const [file, argv] = asRoot
      ? ['runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args]]
      : [join(bin, cmd), args];
    await promisify(execFile)(file, argv, { cwd: dir });
  };
  await run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`; // fsync only matters for an OS crash; a server crash keeps what it committed
  const start = async () => {
    await run('pg_ctl', ['-D', data, '-o', opts, '-l', join(dir, 'log'), '-w', '-t', '60', 'start']);
  };
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    /** Stops the server at once (`immediate`: like a crash, clients lose their connections mid-query). */
    async stop() {
      await run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    },
    start,
    async dispose() {
      spawnSync(
        asRoot ? 'runuser' : join(bin, 'pg_ctl'),
        asRoot
          ? ['-u', 'postgres', '--', join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', 'stop']
          : ['-D', data, '-m', 'immediate', 'stop'],
        { stdio: 'ignore' },
      );
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
