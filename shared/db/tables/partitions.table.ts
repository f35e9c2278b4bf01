import type { GeneratedTimestamp } from './columns.ts';

/** One row per event partition processors lease (migration 0250): the fencing epoch of its current owner. */
export interface PartitionLeaseTable {
  partition: number;
  epoch: number;
  owner: string;
  claimed_at: GeneratedTimestamp;
}
