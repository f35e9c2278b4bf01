import { spawn, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Config } from '../shared/config.ts';
import type { Logger } from '../shared/logger.ts';

/** `--workers auto`: every core but one (left to the OS, NATS or the database on the same machine); at least one. */
export function workerCount(spec: string, cores = availableParallelism()): number {
  if (spec === 'auto') return Math.max(1, cores - 1);
  const n = Number(spec);
  if (!/^\d+$/.test(spec) || n < 1 || n > 256) throw new Error(`"${spec}" is not auto or a whole number from 1 to 256`);
  return n;
}

/** Why N workers cannot run with these settings (they would all consume every partition), or undefined. */
export function workersProblem(config: Config, n: number): string | undefined {
  if (n <= 1) return undefined;
  if (!config.NATS_URL) return '--workers needs NATS_URL: the workers share the partitions through NATS leases';
  if (config.PROCESSOR_PARTITIONS.trim() !== 'auto')
    return `--workers needs PROCESSOR_PARTITIONS=auto (it is "${config.PROCESSOR_PARTITIONS}"): a static set would give every worker the same partitions`;
  return undefined;
}

const CLI = fileURLToPath(new URL('./cli.ts', import.meta.url));
/** A worker that died is started again after this (a crash loop costs one start a second, not a busy loop). */
const RESTART_DELAY_MS = 1000;

/**
 * `friction processor --workers N`: N processor processes on this machine, each taking partition leases like any
 * other processor (a JavaScript thread bounds one processor's throughput). Worker i serves its /healthz, /readyz and
 * /metrics on PORT + i. A worker that dies is restarted; its partitions are taken over by the others meanwhile.
 * SIGTERM/SIGINT stop every worker (each releases its leases) before this process exits.
 */
export async function runProcessorWorkers(config: Config, n: number, log: Logger): Promise<void> {
  const workers = new Map<number, ChildProcess>();
  let stopping = false;
  const start = (i: number) => {
    const child = spawn(process.execPath, [CLI, 'processor'], {
      env: { ...process.env, PORT: String(config.PORT === 0 ? 0 : config.PORT + i) },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    workers.set(i, child);
    log.info({ worker: i, pid: child.pid, port: config.PORT === 0 ? 0 : config.PORT + i }, 'processor worker started');
    child.once('exit', (code, signal) => {
      workers.delete(i);
      if (stopping) return;
      log.error({ worker: i, code, signal }, 'processor worker exited; restarting it');
      setTimeout(() => !stopping && start(i), RESTART_DELAY_MS);
    });
  };
  for (let i = 0; i < n; i++) start(i);
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal, workers: workers.size }, 'stopping the processor workers');
      if (workers.size === 0) return resolve();
      let left = workers.size;
      for (const w of workers.values()) {
        w.once('exit', () => --left === 0 && resolve());
        w.kill(signal);
      }
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
