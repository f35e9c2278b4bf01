import { counter, gauge, histogram } from '../../shared/http/metrics.ts';

/** Partitions this processor holds the lease of right now (a processor's share; the sum over processors is the total). */
export const partitionsOwned = gauge(
  'friction_processor_partitions_owned',
  'Event partitions this processor holds the lease of',
  ['processor'],
);

/** The fencing epoch this processor writes a partition with (absent: not owned). */
export const partitionEpoch = gauge(
  'friction_processor_partition_epoch',
  'Lease epoch of each partition this processor owns (its database writes carry it)',
  ['processor', 'partition'],
);

/**
 * Lease changes: `acquired`, `released` (given up for a fair share or at shutdown), `lost` (a renewal found it
 * expired or taken), `fenced` (the database refused a batch written with an older epoch).
 */
export const partitionLeaseEvents = counter(
  'friction_processor_partition_lease_events_total',
  'Partition lease acquisitions, releases, losses and fencing refusals',
  ['event'],
);

/** How long a new owner took to rebuild a partition's windows and clusters from the database before consuming. */
export const partitionRebuildSeconds = histogram(
  'friction_processor_partition_rebuild_seconds',
  "Rebuild of a newly acquired partition's windows and clusters from the database",
  [0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60],
);
