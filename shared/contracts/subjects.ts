/**
 * Stream, subject and durable-consumer names. Nothing else spells them: every role derives them from here,
 * with an optional prefix so tests (and several deployments) can share one NATS server.
 */
export interface Topology {
  prefix: string;
  partitions: number;
  /** Stream holding accepted SDK batches. */
  eventsStream: string;
  /**
   * The stream of API commands of earlier versions, retired (migration 0181): API changes reach subscribers as
   * notifications through the outbox like the processor's. Named only so that start-up removes it.
   */
  retiredCommandsStream: string;
  /** Stream of notifications for the dispatcher (issue.created, alert.triggered, ...). */
  notifyStream: string;
  /** `events.v1.<partition>.<siteId>` */
  eventSubject(siteId: string): string;
  /** Filter of one partition's durable consumer: `events.v1.<p>.>` */
  partitionFilter(partition: number): string;
  /** Durable pull consumer of one partition. */
  partitionConsumer(partition: number): string;
  /** `notify.v1.<kind>`, kind being a webhook event kind such as `issue.created`. */
  notifySubject(kind: string): string;
  /** Core-NATS broadcast (not a stream): hashes of API keys just revoked, for every process's key cache. */
  keyRevokedSubject: string;
  /** Core-NATS broadcast: `{ site_id }` of a site whose SDK config changed, for every ingest's config cache. */
  sdkConfigChangedSubject: string;
  /** Core-NATS broadcast: a process committed outbox rows; the relay wakes at once instead of at its next poll. */
  outboxQueuedSubject: string;
  allEventsFilter: string;
  allNotifyFilter: string;
}

/** FNV-1a (32-bit) of the site id: stable across processes and languages, so every ingest agrees. */
export function partitionOf(siteId: string, partitions: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < siteId.length; i++) {
    h ^= siteId.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % partitions;
}

export function topology(prefix: string, partitions: number): Topology {
  const p = prefix ? `${prefix}.` : '';
  const P = prefix ? `${prefix}_` : '';
  return {
    prefix,
    partitions,
    eventsStream: `${P}EVENTS`,
    retiredCommandsStream: `${P}COMMANDS`,
    notifyStream: `${P}NOTIFY`,
    eventSubject: (siteId) => `${p}events.v1.${partitionOf(siteId, partitions)}.${siteId}`,
    partitionFilter: (n) => `${p}events.v1.${n}.>`,
    partitionConsumer: (n) => `${P}processor-p${n}`,
    notifySubject: (kind) => `${p}notify.v1.${kind}`,
    keyRevokedSubject: `${p}broadcast.v1.key-revoked`,
    sdkConfigChangedSubject: `${p}broadcast.v1.sdk-config-changed`,
    outboxQueuedSubject: `${p}broadcast.v1.outbox-queued`,
    allEventsFilter: `${p}events.v1.>`,
    allNotifyFilter: `${p}notify.v1.>`,
  };
}
