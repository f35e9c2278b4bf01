import { Counter, Gauge, Histogram } from 'prom-client';
import { registry } from '../../shared/http/metrics.ts';

/** Partitions this processor holds the lease of right now (a processor's share; the sum over processors is the total). */
export const partitionsOwned = new Gauge({
  name: 'friction_processor_partitions_owned',
  help: 'Event partitions this processor holds the lease of',
  labelNames: ['processor'] as const,
  registers: [registry],
});

/** The fencing epoch this processor writes a partition with (absent: not owned). */
export const partitionEpoch = new Gauge({
  name: 'friction_processor_partition_epoch',
  help: 'Lease epoch of each partition this processor owns (its database writes carry it)',
  labelNames: ['processor', 'partition'] as const,
  registers: [registry],
});

/**
 * Lease changes: `acquired`, `released` (given up for a fair share or at shutdown), `lost` (a renewal found it
 * expired or taken), `fenced` (the database refused a batch written with an older epoch).
 */
export const partitionLeaseEvents = new Counter({
  name: 'friction_processor_partition_lease_events_total',
  help: 'Partition lease acquisitions, releases, losses and fencing refusals',
  labelNames: ['event'] as const,
  registers: [registry],
});

/** How long a new owner took to rebuild a partition's windows and clusters from the database before consuming. */
export const partitionRebuildSeconds = new Histogram({
  name: 'friction_processor_partition_rebuild_seconds',
  help: "Rebuild of a newly acquired partition's windows and clusters from the database",
  buckets: [0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60],
  registers: [registry],
});
