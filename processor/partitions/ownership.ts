import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { JetStreamBus } from '../../shared/bus/jetstream-bus.ts';
import { leaseBucketName } from '../../shared/bus/topology.ts';
import type { Infra } from '../../shared/infra.ts';
import { LeaseBucket } from './lease-bucket.ts';
import { startLeasedProcessor, type LeasedProcessor, type LeasedProcessorOptions } from './leased-processor.ts';

/** A processor instance's id in the lease bucket: readable in logs, unique across hosts, processes and worker threads. */
export function leaseIdentity(): string {
  return `${hostname().replace(/[^A-Za-z0-9_-]/g, '_')}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

/**
 * Starts a leased processor when PROCESSOR_PARTITIONS is `auto` and the bus is NATS; undefined otherwise (a static
 * set, or the embedded single process, which owns every partition).
 */
export async function startPartitionOwnership(
  infra: Infra,
  o: Omit<LeasedProcessorOptions, 'bucket'>,
): Promise<LeasedProcessor | undefined> {
  if (infra.config.PROCESSOR_PARTITIONS.trim() !== 'auto' || !(infra.bus instanceof JetStreamBus)) return undefined;
  const bucket = await LeaseBucket.open(infra.bus.nc, leaseBucketName(infra.topology), {
    ttlMs: infra.config.PROCESSOR_LEASE_TTL_MS,
    replicas: infra.bus.replicas,
  });
  infra.log.info(
    { processor: o.me, leaseTtlMs: bucket.ttlMs, partitions: infra.topology.partitions },
    'processor taking partitions by lease',
  );
  return startLeasedProcessor({ ...o, bucket });
}
