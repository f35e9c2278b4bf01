import { Progress } from './progress.ts';
import { waitReady } from './harness.ts';

/** The processor's `friction_processor_events_total{outcome="stored"}`: events committed so far. */
export async function committedEvents(metricsUrl: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  const m = /^friction_processor_events_total\{outcome="stored"\} (\d+)/m.exec(text);
  return m ? Number(m[1]) : 0;
}

/**
 * Watches a processor (listening on `port`) drain a backlog of `expected` events and returns its rate in
 * events/s. Progress comes from the processor's committed-events counter (it counts after each commit): polling
 * count(*) on the growing table every 50 ms would take PostgreSQL CPU from the very thing being measured. Timed
 * from the first poll that sees commits, counting only what was committed after it, so start-up and the window
 * rebuild are not counted and nothing committed before the clock started inflates the rate.
 * NOTE: every poll is a full scrape in the measured process (default metrics, a consumer-info request per
 * partition, an outbox count), so polls are spaced by half the time the backlog still needs at the rate seen so
 * far (25-500 ms): a handful of scrapes per drain instead of twenty a second, the last ones 25 ms apart while the rate
 * holds, so the end is still seen within about 25 ms.
 */
export async function measureDrain(port: number, expected: number, label = 'processor drain'): Promise<number> {
  await waitReady(`http://127.0.0.1:${port}/readyz`, 120_000);
  const progress = new Progress(label, expected);
  let committed = 0;
  let first: { at: number; committed: number } | undefined;
  const deadline = Date.now() + 5 * 60_000;
  while (Date.now() < deadline) {
    committed = await committedEvents(`http://127.0.0.1:${port}/metrics`);
    if (committed > 0) first ??= { at: performance.now(), committed };
    progress.update(committed);
    if (committed >= expected) break;
    const elapsed = first ? (performance.now() - first.at) / 1000 : 0;
    const rate = first && elapsed > 0 ? (committed - first.committed) / elapsed : 0;
    const wait = rate > 0 ? Math.min(500, Math.max(25, ((expected - committed) / rate) * 500)) : 50;
    await new Promise((r) => setTimeout(r, wait));
  }
  progress.done();
  if (!first) return 0;
  return (committed - first.committed) / ((performance.now() - first.at) / 1000);
}
