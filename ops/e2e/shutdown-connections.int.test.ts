/**
 * Issue 31, item 2 (shutdown part): a /metrics scrape under way when shutdown begins must not hold it. Its
 * keep-alive connection, idle only after closeIdleConnections already ran, used to keep server.close() waiting until
 * the keep-alive timeout (65 s), past the 30 s shutdown budget; a scrape that never ends held it forever.
 */
import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { closeServer, serveRoles } from '../server.ts';
import { processorLag } from '../../shared/http/metrics.ts';
import { createLogger } from '../../shared/logger.ts';

const within = <T>(p: Promise<T>, ms: number) =>
  Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);

for (const scrape of ['finishes during shutdown (its connection stays open, kept alive)', 'never finishes'] as const) {
  test.serial(`shutdown closes a /metrics scrape that ${scrape} within its grace`, async (t) => {
    const server = await serveRoles('test', [], createLogger('silent'), 0, '127.0.0.1');
    let release!: () => void;
    let started!: () => void;
    const inCollector = new Promise<void>((r) => (started = r));
    const gate = new Promise<void>((r) => (release = r));
    const remove = processorLag.add(async () => {
      started();
      await gate;
      return [];
    });
    t.teardown(() => {
      remove();
      release();
    });
    const agent = new Agent({ keepAlive: true });
    t.teardown(() => agent.destroy());
    const answered = new Promise<number | string>((resolve) => {
      const req = request(
        { host: '127.0.0.1', port: (server.address() as AddressInfo).port, path: '/metrics', agent },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', (err) => resolve(err.message));
      req.end();
    });
    await inCollector;
    const closing = closeServer(server, 500);
    if (scrape !== 'never finishes') {
      release();
      t.is(await answered, 200, 'the scrape under way is answered');
    }
    t.true(await within(closing, 5000), 'the server closed within its grace, not at the keep-alive timeout');
    if (scrape === 'never finishes') t.is(typeof (await answered), 'string', 'the stuck scrape was cut');
  });
}
