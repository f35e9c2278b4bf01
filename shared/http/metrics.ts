import { readFileSync } from 'node:fs';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** One registry per process; every role registers its metrics here and /metrics serves it. */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });

/** A counter in the process registry, with the label names its series are split by (none: one series). */
export function counter<L extends string>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
  return new Counter({ name, help, labelNames, registers: [registry] });
}

/** A gauge in the process registry, with the label names its series are split by (none: one series). */
export function gauge<L extends string>(name: string, help: string, labelNames: readonly L[] = []): Gauge<L> {
  return new Gauge({ name, help, labelNames, registers: [registry] });
}

/** A histogram in the process registry: `buckets` are its upper bounds, in the metric's unit. */
export function histogram<L extends string>(
  name: string,
  help: string,
  buckets: number[],
  labelNames: readonly L[] = [],
): Histogram<L> {
  return new Histogram({ name, help, buckets, labelNames, registers: [registry] });
}

export const httpRequests = counter('friction_http_requests_total', 'HTTP requests by role, route and status', [
  'role',
  'route',
  'status',
]);
export const httpDuration = histogram(
  'friction_http_request_duration_seconds',
  'HTTP request duration',
  [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  ['role', 'route'],
);

/** `friction_build_info{version, node}` 1: which build and runtime each process runs (join it onto other series). */
export const buildInfo = gauge(
  'friction_build_info',
  'Build of this process: package version and Node version (value always 1)',
  ['version', 'node'],
);
buildInfo.set({ version: packageVersion(), node: process.versions.node }, 1);

/** This build's version (package.json): /healthz and friction_build_info say it. */
export function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
      .version;
  } catch {
    return 'unknown';
  }
}

export const processorBatchDuration = histogram(
  'friction_processor_batch_duration_seconds',
  'Time to store one fetched batch (its transaction: events, signals, sessions, scores, issues, outbox)',
  [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
);

export const deadLetters = counter(
  'friction_processor_dead_letters_total',
  'Stream messages the processor stored as dead letters (poison) and terminated',
);

/** Sources of a scrape-time gauge: each running processor adds its own and removes it when it stops. */
type Source = () => Promise<Array<{ labels: Record<string, string>; value: number }>>;

function scrapeGauge(name: string, help: string, labelNames: string[]) {
  const sources = new Set<Source>();
  new Gauge({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      this.reset();
      for (const source of sources) {
        // A source that cannot answer (database or bus down) leaves its series out of this scrape.
        for (const { labels, value } of await source().catch(() => [])) this.set(labels, value);
      }
    },
  });
  return { add: (s: Source) => (sources.add(s), () => sources.delete(s)) };
}

/** Messages of each owned partition not yet committed (waiting + delivered but unacked): the processor's lag. */
export const processorLag = scrapeGauge(
  'friction_processor_lag_messages',
  'Stream messages of a partition not yet committed by the processor (pending + ack pending)',
  ['partition'],
);
/**
 * How far behind each owned partition is in time: the age of its oldest message not yet committed (0 when none).
 * The `processor_lag` degradation event opens past PROCESSOR_LAG_DEGRADED_SECONDS (processor/dispatcher).
 */
export const processorLagSeconds = scrapeGauge(
  'friction_processor_lag_seconds',
  'Age in seconds of the oldest stream message of a partition not yet committed by the processor (0 when none)',
  ['partition'],
);
/** Outbox rows written but not yet relayed to the NOTIFY stream. */
export const outboxBacklog = scrapeGauge(
  'friction_outbox_backlog',
  'Outbox rows not yet published to the NOTIFY stream',
  [],
);

/**
 * Delivery attempts by channel (webhook, slack, email, …) and outcome: `succeeded`; `retrying` (failed, another
 * attempt is scheduled); `failed` (failed with no attempt left, or the endpoint was disabled); `abandoned` (never
 * sent: endpoint or channel gone). Counted once the attempt's record is written.
 */
export const deliveries = counter(
  'friction_deliveries_total',
  'Notification delivery attempts by channel and outcome (succeeded, retrying, failed, abandoned)',
  ['channel', 'outcome'],
);
