/**
 * Test-only: Friction's roles as OS processes (a test that SIGKILLs one, or runs the CLI as a user would), and the
 * waits around them. Also used by the benchmarks (ops/bench/harness.ts).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually, GiveUp } from './eventually.ts';

/** The repository root: roles run from it, as `npm run friction` does. */
export const repoRoot = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The pinned Node 24 (the machine's `node` may be older). */
export const NODE = path.join(repoRoot, 'node_modules', '.bin', 'node');

type Env = Record<string, string | undefined>;

export interface RoleOptions {
  /**
   * Only PATH, HOME, NODE_COMPILE_CACHE and `env` (nothing of the runner's environment leaks into the role: no
   * service URL it would otherwise pick up). Default: the runner's environment plus `env`.
   */
  clean?: boolean;
  /** `pipe` to write the process's stdin (default `ignore`). */
  stdin?: 'pipe';
  /** `pipe` to read its stdout (default `ignore`). */
  stdout?: 'pipe';
  /** `pipe` to read its stderr (default: the runner's). */
  stderr?: 'pipe';
  /** Flags for Node itself (e.g. `--cpu-prof`). */
  nodeArgs?: string[];
}

function roleEnv(env: Env, clean: boolean | undefined): Env {
  // The compile cache (set by `npm test`) only spares the process compiling its modules again: not a setting.
  const node = { NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE };
  return clean ? { PATH: process.env.PATH, HOME: process.env.HOME, ...node, ...env } : { ...process.env, ...env };
}

/**
 * Every process started here that still runs, spawnRole's each the leader of a process group of its own (`detached`),
 * so that a role's own children (a processor's workers) go with it. A test file's teardowns stop them; but ava ends a
 * file that timed out (or a run interrupted) with SIGTERM, which skips the teardowns: its processes lived on, holding
 * ava's stderr open, and ava waited for them (543 s for a processor `processor-crash.int` had started). So the file's
 * process kills their groups when it exits or is sent SIGTERM or SIGINT.
 */
const running = new Set<ChildProcess>();
const killGroups = () => {
  for (const p of running)
    try {
      if (p.pid) process.kill(-p.pid, 'SIGKILL');
    } catch {
      // Not a group's leader (runFriction's, bounded by its timeout anyway), or exited meanwhile.
      p.kill('SIGKILL');
    }
};
let hooked = false;
function tracked<P extends ChildProcess>(p: P): P {
  if (!hooked) {
    hooked = true;
    process.once('exit', killGroups);
    // Their own groups no longer get a terminal's Ctrl-C (a benchmark run by hand): this process passes it on.
    for (const [signal, code] of [
      ['SIGTERM', 143],
      ['SIGINT', 130],
    ] as const)
      process.once(signal, () => {
        killGroups();
        process.exit(code);
      });
  }
  running.add(p);
  p.once('exit', () => running.delete(p));
  return p;
}

/**
 * `node <args>` from the repository root: `['ops/cli.ts', 'processor']` for a role, or a script of its own.
 * Logs at `warn` on 127.0.0.1 on a free port unless `env` says otherwise.
 */
export function spawnRole(args: string[], env: Env = {}, opts: RoleOptions = {}): ChildProcess {
  return tracked(
    spawn(NODE, [...(opts.nodeArgs ?? []), ...args], {
      cwd: repoRoot,
      detached: true,
      // Adaptive load shedding is off unless a test asks for it: several test files and their processes share two
      // cores, so a role's requests are slow for reasons that say nothing of its own load (the fixed in-flight bound
      // stays).
      env: roleEnv(
        { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', INGEST_LATENCY_TARGET_MS: '0', ...env },
        opts.clean,
      ),
      stdio: [opts.stdin ?? 'ignore', opts.stdout ?? 'ignore', opts.stderr ?? 'inherit'],
    }),
  );
}

export interface Run {
  /** The exit code (1 for a process killed by a signal or the timeout). */
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/** `friction <args>` to the end, as a user runs it: a clean environment unless `clean: false`; silent logs. */
export function runFriction(
  args: string[],
  env: Env = {},
  { clean = true, timeoutMs = 60_000 }: { clean?: boolean; timeoutMs?: number } = {},
): Promise<Run> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    tracked(
      execFile(
        NODE,
        ['ops/cli.ts', ...args],
        { cwd: repoRoot, env: roleEnv({ LOG_LEVEL: 'silent', ...env }, clean), timeout: timeoutMs },
        (err, stdout, stderr) => {
          const code = err ? (err as { code?: unknown }).code : 0;
          resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr, ms: Date.now() - t0 });
        },
      ),
    );
  });
}

const exited = (p: ChildProcess): boolean => p.exitCode !== null || p.signalCode !== null;

/**
 * Waits until `url` answers 200 and resolves to that response. With `role`, a role that exits first fails the
 * wait at once, naming its exit code, instead of at the timeout.
 */
export function waitReady(url: string, timeoutMs = 60_000, role?: ChildProcess): Promise<Response> {
  return eventually(
    async () => {
      if (role && exited(role))
        throw new GiveUp(new Error(`the process exited (${role.exitCode ?? role.signalCode}) before ${url} answered`));
      const res = await fetch(url);
      return res.status === 200 ? res : undefined;
    },
    { timeoutMs, stepMs: 100, what: `${url} to answer 200` },
  );
}

/**
 * Stops a process and resolves once it has exited: `SIGKILL` is a crash (no shutdown work); `SIGTERM` (the default)
 * lets it shut down, and is followed by SIGKILL if it has not exited 10 s later.
 */
export function kill(p: ChildProcess | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  return new Promise((resolve) => {
    if (!p || exited(p)) return resolve();
    p.once('exit', () => resolve());
    p.kill(signal);
    if (signal !== 'SIGKILL') setTimeout(() => p.kill('SIGKILL'), 10_000).unref();
  });
}

/** A free loopback port (best effort: the OS picks it, we release it for the child). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
    s.once('error', reject);
  });
}
