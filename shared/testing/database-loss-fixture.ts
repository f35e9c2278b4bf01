/**
 * Test fixture (pglite-thread.test.ts): a process in the shape of `friction start` (an interval stands in for the
 * listening server that keeps it alive) whose embedded database thread dies. It must exit 1, not hang.
 */
import { PGliteThread } from '../db/pglite-thread.ts';
import { exitWhenDatabaseLost } from '../infra.ts';
import { createLogger } from '../logger.ts';
import { embeddedTemplate } from './embedded-template.ts';

// From the template: a new database would spend seconds of CPU in initdb only for its thread to be killed.
const lite = await PGliteThread.open('memory://', await embeddedTemplate());
exitWhenDatabaseLost({ lost: lite.lost }, createLogger('info', { role: 'fixture' }));
setInterval(() => {}, 1000);
const waiting = lite
  .query('select pg_sleep(30)')
  .catch((err: { code?: string }) => process.stdout.write(`query failed: ${err.code}\n`));
await lite.kill();
await waiting;
