import { partitionOf } from '../../shared/contracts/subjects.ts';
import { ensureStreams } from '../../shared/bus/topology.ts';
import { ENVIRONMENTS } from '../../shared/domain/deploy-verification.ts';
import type { FrictionEngineSink } from '../engine-sink.ts';
import { consumePartition, watchOutbox, type ProcessorOptions, type RunningProcessor } from '../processor.ts';
import { listSiteIds } from '../store/scores.store.ts';
import { fencedBulk } from './fence.ts';
import type { LeaseBucket } from './lease-bucket.ts';
import { partitionRebuildSeconds } from './metrics.ts';
import { PartitionLeases, type PartitionRun } from './partition-leases.ts';

export interface LeasedProcessorOptions extends Omit<ProcessorOptions, 'partitions' | 'sink'> {
  sink: FrictionEngineSink;
  bucket: LeaseBucket;
  /** This processor's id in the lease bucket (unique per instance: host, pid, random). */
  me: string;
}

/** A processor whose partitions come and go with its leases. */
export interface LeasedProcessor extends RunningProcessor {
  /** The partitions it consumes (or is rebuilding) now. */
  owned(): number[];
}

/**
 * PROCESSOR_PARTITIONS=auto on NATS: the processor takes a fair share of the partitions through leases (see
 * PartitionLeases) instead of a static set. A partition it acquires is rebuilt from the database before it consumes
 * it, and its sites' state is dropped when it goes, so a site's windows and clusters live in one processor at a time.
 */
export async function startLeasedProcessor(o: LeasedProcessorOptions): Promise<LeasedProcessor> {
  await ensureStreams(o.bus, o.topology);
  const total = o.topology.partitions;
  const sitesOf = async (p: number) => (await listSiteIds(o.db)).filter((s) => partitionOf(s, total) === p);
  const exclusive = <T>(fn: () => Promise<T>) => (o.gate ? o.gate.exclusive(fn) : fn());
  const forget = (sites: readonly string[]) => {
    for (const env of ENVIRONMENTS)
      for (const s of sites) {
        o.sink.engines[env].scores.forgetSite(s);
        o.sink.engines[env].issues.forgetSite(s);
      }
  };
  const leases = new PartitionLeases({
    bucket: o.bucket,
    db: o.db,
    me: o.me,
    total,
    log: o.log,
    start: async (p, epoch, onFenced): Promise<PartitionRun> => {
      const t0 = performance.now();
      const sites = await sitesOf(p);
      await exclusive(async () => {
        forget(sites);
        await o.sink.rebuild(o.db, sites);
      });
      const seconds = (performance.now() - t0) / 1000;
      partitionRebuildSeconds.observe(seconds);
      o.log.info({ partition: p, epoch, sites: sites.length, ms: Math.round(seconds * 1000) }, 'partition rebuilt');
      const abort = new AbortController();
      const bulk = fencedBulk(o.bulk, p, epoch, (err) => {
        abort.abort(); // before the batch loop sees the error: it hands the batch back instead of retrying it
        onFenced(err);
      });
      const { loop } = await consumePartition({ ...o, partitions: [p] }, p, abort.signal, bulk);
      return {
        done: loop,
        stop: async () => {
          abort.abort();
          await loop.catch(() => {});
          // Sites created since the rebuild are this partition's too: drop whatever memory holds for the partition.
          const gone = await sitesOf(p).catch(() => sites);
          await exclusive(async () => forget(gone));
        },
      };
    },
  });
  await leases.start();
  const unlistenOutbox = watchOutbox(o.db);
  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= leases.stop().finally(unlistenOutbox));
  return {
    done: leases.done,
    owned: () => leases.owned(),
    stop,
  };
}
