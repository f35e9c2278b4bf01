import { ownedPartitions } from '../shared/config.ts';
import { partitionOf } from '../shared/contracts/subjects.ts';
import { databaseReady, type Infra } from '../shared/infra.ts';
import type { ReadinessCheck } from '../shared/http/ops-routes.ts';
import type Router from '@koa/router';
import { startProcessor, type RunningProcessor } from './processor.ts';
import { FrictionEngineSink } from './engine-sink.ts';
import { OutboxRelay } from './notify/outbox-relay.ts';
import { AlertEvaluator } from './alerts/alert-evaluator.ts';
import { listSiteIds } from './store/scores.store.ts';
import { TickGate } from './tick-gate.ts';
import { scheduleTicks, singleFlight } from './tick-schedule.ts';
import { limitHeapGrowth } from './heap-growth.ts';
import { leaseIdentity, startPartitionOwnership } from './partitions/ownership.ts';

/** How often hours (days) that left the score (cluster) window are evicted and their pages and issues updated. */
const TICK_MS = 5 * 60_000;

/** The processor role: rebuilds its windows from the database, then consumes its partitions. */
export function processorRole(infra: Infra, opts: { now?: () => number } = {}) {
  return {
    async start(): Promise<{ running: RunningProcessor; http: { routers: Router[]; checks: ReadinessCheck[] } }> {
      const { config, log } = infra;
      // Before the rebuild: the state it builds is what V8's growth factor multiplies.
      limitHeapGrowth(config.PROCESSOR_HEAP_GROWTH_PERCENT);
      // The embedded database is one process's (its directory is locked): this relay is the only one.
      const relay = new OutboxRelay({
        db: infra.database.db,
        bus: infra.bus,
        topology: infra.topology,
        log,
        sole: infra.database.kind === 'pglite',
      });
      const keeper = new FrictionEngineSink({
        log,
        relay,
        now: opts.now,
        alerts: new AlertEvaluator({ log }),
        // No background worker runs TimescaleDB's policies inside PGlite: the tick runs its retention.
        retentionPolicies: infra.database.kind === 'pglite',
      });
      const gate = new TickGate();
      const common = {
        db: infra.database.db,
        bulk: infra.database.bulk,
        bus: infra.bus,
        topology: infra.topology,
        batchMessages: config.PROCESSOR_BATCH_MESSAGES,
        fetchExpiresMs: config.PROCESSOR_FETCH_EXPIRES_MS,
        batchWindowMs: config.PROCESSOR_BATCH_WINDOW_MS,
        ackWaitMs: config.PROCESSOR_ACK_WAIT_MS,
        log,
        gate,
      };
      // Leased (auto on NATS): partitions come and go, each rebuilt when acquired. Static: rebuilt all at once here.
      const leased = await startPartitionOwnership(infra, { ...common, sink: keeper, me: leaseIdentity() });
      let running: RunningProcessor;
      let owned: () => ReadonlySet<number>;
      if (leased) {
        running = leased;
        owned = () => new Set(leased.owned());
        relay.start();
      } else {
        const partitions = ownedPartitions(config.PROCESSOR_PARTITIONS, infra.topology.partitions);
        const fixed = new Set(partitions);
        owned = () => fixed;
        await keeper.rebuild(
          infra.database.db,
          (await listSiteIds(infra.database.db)).filter((s) => fixed.has(partitionOf(s, infra.topology.partitions))),
        );
        relay.start();
        running = await startProcessor({ ...common, partitions, sink: keeper });
      }
      // Sites created after start are picked up by the tick (their first batch is rebuilt from nothing anyway).
      const ownedSites = async () => {
        const now = owned();
        return (await listSiteIds(infra.database.db)).filter((s) => now.has(partitionOf(s, infra.topology.partitions)));
      };
      // One tick at a time, whoever asks (the schedule, tests): a slow tick delays the next instead of overlapping it.
      // Only what changes the keepers' memory holds the gate; the database-only steps run beside the batches.
      const tick = singleFlight(async () => {
        const sites = await ownedSites();
        try {
          await gate.exclusive(() => keeper.tick(infra.database.db, sites, config.TRIAGE_HOUR_UTC, log));
        } finally {
          // A failed eviction (retried next tick) does not hold back deploy looks and alerts.
          await keeper.tickDatabase(infra.database.db, sites, log);
        }
      });
      const stopTicks = scheduleTicks(tick, TICK_MS, (err) => log.warn({ err }, 'engine tick failed'));
      return {
        running: {
          done: running.done,
          tick,
          stop: async () => {
            stopTicks();
            await running.stop();
            await relay.stop();
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
