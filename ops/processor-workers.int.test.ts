import { eventually } from '../shared/testing/eventually.ts';
import test from 'ava';
import { spawn } from 'node:child_process';
import { leaseOwners, processorEnv } from './testing/processor-process.ts';
import { startTestStack } from './testing/stack.ts';

import { workerCount } from './processor-workers.ts';

test('--workers auto is every core but one, at least one; anything but a whole number is refused', (t) => {
  t.is(workerCount('auto', 8), 7);
  t.is(workerCount('auto', 1), 1);
  t.is(workerCount('3'), 3);
  t.throws(() => workerCount('0'));
  t.throws(() => workerCount('2.5'));
  t.throws(() => workerCount('many'));
});

test('friction processor --workers 2 runs two processors that split the partitions by lease, and stops both on SIGTERM', async (t) => {
  const stack = await startTestStack({ processor: false });
  t.teardown(() => stack.stop());
  const parent = spawn(process.execPath, ['ops/cli.ts', 'processor', '--workers', '2'], {
    env: {
      ...process.env,
      ...processorEnv(stack, {
        PROCESSOR_PARTITIONS: 'auto',
        // Heartbeats every quarter of the lease: the second worker's share is planned within seconds, not the default's.
        PROCESSOR_LEASE_TTL_MS: '2000',
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
      }),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => parent.once('exit', (code) => resolve(code)));
  t.teardown(() => {
    if (parent.exitCode === null) parent.kill('SIGKILL');
  });
  const owners = () => leaseOwners(stack.infra.database.db);
  const split = await eventually(
    async () => {
      const o = await owners();
      return o.length === 2 && o.every((r) => r.n === 8) ? o : undefined;
    },
    { timeoutMs: 90_000 },
  );
  t.is(split.length, 2);
  parent.kill('SIGTERM');
  t.is(await exited, 0);
});
