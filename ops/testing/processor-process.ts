/** Test-only: the processor as its own OS process, so a test can SIGKILL it mid-stream. */
import { spawn, type ChildProcess } from 'node:child_process';

export function spawnProcessor(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['ops/cli.ts', 'processor'], {
    env: { ...process.env, ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', PROCESSOR_BATCH_MESSAGES: '50' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** SIGKILLs `p` and resolves once it exited (at once if it already has). */
export const kill = (p: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (p.exitCode !== null || p.signalCode !== null) return resolve();
    p.once('exit', () => resolve());
    p.kill('SIGKILL');
  });
