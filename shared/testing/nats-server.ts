import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { freePort } from './processes.ts';

async function waitForPort(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((r) => {
      const c = connect({ port, host: '127.0.0.1' });
      c.once('connect', () => (c.destroy(), r(true)));
      c.once('error', () => r(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nats-server did not listen on ${port}`);
}

/**
 * Test-only: a private nats-server with JetStream on a free port (nats.js's own test launcher does the same),
 * so a test can stop and restart "the" NATS without touching the machine's shared server.
 */
export async function startPrivateNats(bin = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server') {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'friction-nats-'));
  let proc: ChildProcess | undefined;
  const start = async () => {
    proc = spawn(bin, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], { stdio: 'ignore' });
    await waitForPort(port);
  };
  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    /** Kills the server (SIGKILL: like a crash, no goodbye to clients). */
    async stop() {
      if (!proc || proc.exitCode !== null) return;
      const p = proc;
      await new Promise<void>((r) => {
        p.once('exit', () => r());
        p.kill('SIGKILL');
      });
    },
    start,
    async dispose() {
      await this.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
