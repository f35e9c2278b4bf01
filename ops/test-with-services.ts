/**
 * `npm test`: checks the real services, migrates a template database once (and makes the embedded one's dump when
 * missing), then runs ava with the service URLs in the environment. Every test file clones its own database from
 * the template; their databases are dropped here, in the background and at the end (`dropClosedDatabases`).
 * Prints a closing line "tests: N passed, N failed" for CI.
 */
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDatabase } from '../shared/db/connection.ts';
import { migrateToLatest } from '../shared/db/migrator.ts';
import { dropClosedDatabases, recreateTemplate } from '../shared/testing/database.ts';
import { embeddedTemplate } from '../shared/testing/embedded-template.ts';
import { testRunId, testServices } from '../shared/testing/services.ts';
import { dockerAnswers, startServiceContainers, type ServiceName } from '../shared/testing/containers.ts';

function reachable(url: string, defaultPort: number): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = connect({ host: u.hostname, port: Number(u.port || defaultPort) });
    s.setTimeout(2000);
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
    s.once('timeout', () => (s.destroy(), resolve(false)));
  });
}

const services: Array<[string, ServiceName, number, 'databaseUrl' | 'natsUrl' | 'redisUrl']> = [
  ['TEST_DATABASE_URL', 'postgres', 5432, 'databaseUrl'],
  ['TEST_NATS_URL', 'nats', 4222, 'natsUrl'],
  ['TEST_REDIS_URL', 'redis', 6379, 'redisUrl'],
];
const down: typeof services = [];
for (const svc of services) if (!(await reachable(testServices[svc[3]], svc[2]))) down.push(svc);
// A service whose URL was left unset and whose local port is silent runs in Docker when a Docker engine answers.
const containerable = down.filter(([name]) => process.env[name] === undefined);
let stopContainers = async () => {};
if (down.length > 0 && containerable.length === down.length && (await dockerAnswers())) {
  process.stderr.write(`starting ${containerable.map((d) => d[1]).join(', ')} with testcontainers\n`);
  const started = await startServiceContainers(containerable.map((d) => d[1]));
  for (const [, name, , field] of containerable) testServices[field] = started.urls[name]!;
  stopContainers = started.stop;
} else if (down.length > 0) {
  process.stderr.write(
    `These services are not reachable: ${down.map(([name, , , field]) => `${name} (${testServices[field]})`).join(', ')}.\n` +
      `Start them (see .ci/run, which starts PostgreSQL, Redis and NATS when they are down), point the variables elsewhere,\n` +
      `or leave them unset with a Docker engine running so testcontainers starts them.\n`,
  );
  process.exit(1);
}

// Both templates at once: the embedded one is made only when its migrations or PGlite changed since the last run.
await Promise.all([
  recreateTemplate(async (url) => {
    const h = await openDatabase({ url, dataDir: '' });
    await migrateToLatest(h.db);
    await h.close();
  }),
  embeddedTemplate(),
]);

// Every test file's databases are dropped here, in the background and at the end, not by the file as it ends (see
// `dropClosedDatabases`).
const dropper = dropClosedDatabases();
const args = process.argv.slice(2);
const child = spawn(process.execPath, ['node_modules/ava/entrypoints/cli.mjs', ...args], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: {
    ...process.env,
    TEST_DATABASE_URL: testServices.databaseUrl,
    TEST_NATS_URL: testServices.natsUrl,
    TEST_REDIS_URL: testServices.redisUrl,
    TEST_TEMPLATE_DATABASE: testServices.templateDatabase,
    TEST_RUN_ID: testRunId,
    TEST_RUNNER_DROPS: '1',
    // Every test file is a process of its own and many start roles as processes: each would strip the types of and
    // compile the same few hundred modules again. Node's compile cache keeps both on disk, keyed by the source's hash
    // (an edited file is compiled afresh), and shortens every start after the first by about a second.
    NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? path.join(tmpdir(), 'friction-node-compile-cache'),
    // Workers must run the same pinned Node as this script.
    PATH: `${process.cwd()}/node_modules/.bin:${process.env.PATH}`,
  },
});
// Ctrl-C reaches ava too, which stops its workers and exits: wait for it, then drop the run's databases as after any
// run. A SIGTERM is passed on to it.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => child.kill('SIGTERM'));
let passed = 0;
let failed = 0;
let skipped = 0;
let partial = '';
// ava's reporter prints one line per test: ✔ passed, ✘ [fail] failed, - skipped. Count them as they stream by.
const count = (line: string) => {
  const plain = line.replace(/\x1b\[[0-9;]*m/g, '');
  if (/^\s*✔/.test(plain)) passed++;
  else if (/^\s*✘ \[fail\]/.test(plain)) failed++;
  else if (/^\s*- \[skip\]/.test(plain)) skipped++;
};
child.stdout.on('data', (chunk: Buffer) => {
  process.stdout.write(chunk);
  const lines = (partial + chunk.toString()).split('\n');
  partial = lines.pop() ?? '';
  lines.forEach(count);
});
const code: number = await new Promise((resolve) => child.on('close', (c) => resolve(c ?? 1)));
const dropped = await dropper
  .stop()
  .catch((err: Error) => void process.stderr.write(`dropping test databases: ${err.message}\n`));
if (dropped?.dropped)
  process.stderr.write(
    `test databases: ${dropped.dropped} dropped by the runner in ${(dropped.ms / 1000).toFixed(1)} s, ` +
      `${(dropped.atEndMs / 1000).toFixed(1)} s of it after the tests\n`,
  );
await stopContainers();
count(partial);
// A crash, timeout or uncaught exception fails the run even when every reported test passed.
if (code !== 0 && failed === 0) failed = 1;
process.stdout.write(`\ntests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
process.exit(code);
