import { ownedPartitions } from '../shared/config.ts';
import { partitionOf } from '../shared/contracts/subjects.ts';
import { databaseReady, type Infra } from '../shared/infra.ts';
import type { ReadinessCheck } from '../shared/http/ops-routes.ts';
import type Router from '@koa/router';
import { startProcessor, type RunningProcessor } from './processor.ts';
import { ScoreKeeper } from './scoring/score-keeper.ts';
import { listSiteIds } from './store/scores.store.ts';

/** How often hours that left the 24-hour window are evicted and their pages rescored. */
const TICK_MS = 5 * 60_000;

/** The processor role: rebuilds its windows from the database, then consumes its partitions. */
export function processorRole(infra: Infra, opts: { now?: () => number } = {}) {
  return {
    async start(): Promise<{ running: RunningProcessor; http: { routers: Router[]; checks: ReadinessCheck[] } }> {
      const { config, log } = infra;
      const partitions = ownedPartitions(config.PROCESSOR_PARTITIONS, config.EVENT_PARTITIONS);
      const keeper = new ScoreKeeper({ now: opts.now, log });
      const owned = new Set(partitions);
      const sites = (await listSiteIds(infra.database.db)).filter((s) => owned.has(partitionOf(s, config.EVENT_PARTITIONS)));
      await keeper.rebuild(infra.database.db, sites);
      const running = await startProcessor({
        db: infra.database.db,
        bus: infra.bus,
        topology: infra.topology,
        partitions,
        sink: keeper,
        batchMessages: config.PROCESSOR_BATCH_MESSAGES,
        fetchExpiresMs: config.PROCESSOR_FETCH_EXPIRES_MS,
        maxDeliver: config.PROCESSOR_MAX_DELIVER,
        ackWaitMs: config.PROCESSOR_ACK_WAIT_MS,
        log,
      });
      const timer = setInterval(() => {
        keeper.tick(infra.database.db).catch((err) => log.warn({ err }, 'score tick failed'));
      }, TICK_MS);
      timer.unref();
      return {
        running: {
          done: running.done,
          stop: async () => {
            clearInterval(timer);
            await running.stop();
          },
        },
        http: {
          routers: [],
          checks: [
            ['database', () => databaseReady(infra)],
            ['bus', () => infra.bus.healthy()],
          ],
        },
      };
    },
  };
}
