import { existsSync } from 'node:fs';

// Node 24 strips TypeScript types itself, so ava loads .ts test files as plain ES modules.
// TEST_BROWSER=skip leaves out the Chromium suites (*.browser.test.ts); TEST_BROWSER=only runs just them.
const all = '{shared,ingest,processor,api,ops,cli}/**/*.test.ts';
const browser = '{shared,ingest,processor,api,ops,cli}/**/*.browser.test.ts';
const choices = { '': [all], skip: [all, `!${browser}`], only: [browser] };
const files = choices[process.env.TEST_BROWSER ?? ''];
if (!files) throw new Error(`TEST_BROWSER must be skip or only, not ${JSON.stringify(process.env.TEST_BROWSER)}`);

// Four files run at a time. Most files mostly wait (for a role to start, a processor tick, a timer, a browser's
// detection window), so fewer leave the cores idle part of the run; more oversubscribe them, and every file then costs
// more CPU. How many is best depends on the machine (docs/development.md): on this session's two-core machine, with
// nothing else running, the whole run took 315 s three at a time (84 core-seconds idle), 270 s four at a time (20
// idle) and 272 s five at a time; on the slower two-core machine before it, three at a time was best (751 s, against
// 822 s four at a time).
// They are taken in this order: the longest first (timed in a whole run and alone, see docs/development.md), so that
// none of them starts near the end and runs alone while the other slots have nothing left. Every other file follows
// in ava's own order.
const longestFirst = [
  'ingest/sdk/detection.browser.test.ts',
  'api/routes/screenshots/screenshots.browser.test.ts',
  'ops/e2e/dashboard.browser.test.ts',
  'ops/e2e/connections.int.test.ts',
  'ops/chaos/chaos.int.test.ts',
  'ops/e2e/rollups.int.test.ts',
  'ops/e2e/database-outage.int.test.ts',
  'ops/compose.test.ts',
  'ops/e2e/sdk-config.browser.test.ts',
  'ops/demo-data.int.test.ts',
  'ops/bench/shed.int.test.ts',
  'ops/e2e/deploy-overwhelming.int.test.ts',
  'ops/e2e/sdk-service.browser.test.ts',
  'ops/e2e/security-round3.int.test.ts',
  'ops/bench/verify-sim.test.ts',
];
const stale = longestFirst.filter((f) => !existsSync(new URL(f, import.meta.url)));
if (stale.length) throw new Error(`ava.config.js lists test files that do not exist: ${stale.join(', ')}`);
const rank = (file) => {
  const i = longestFirst.findIndex((f) => file.endsWith(`/${f}`) || file === f);
  return i === -1 ? longestFirst.length : i;
};

export default {
  files,
  extensions: { ts: 'module' },
  timeout: '120s',
  workerThreads: false,
  concurrency: 4,
  // Array.prototype.sort is stable: the files not listed keep ava's order.
  sortTestFiles: (a, b) => rank(a) - rank(b),
};
