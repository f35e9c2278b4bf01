/**
 * `npm run bench -- restart`: the embedded default's restart chaos (issue 31, item 2). Rounds of two-event batches
 * sent to `friction start` as fast as it answers, each ended at its last 202 by SIGTERM or SIGKILL (alternating),
 * then a restart on the same data; printed: per round the backlog the signal met and how long the stop took, then N
 * events answered 202, N stored (and distinct), and the deploy webhooks queued and delivered. Not a timing figure:
 * the count must match whatever the machine's load.
 *
 * Environment: BENCH_ROUNDS (10), BENCH_BATCHES (3000 per round), BENCH_CONNECTIONS (32 requests in flight).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { runRestartRounds, type Stop } from '../testing/embedded-restarts.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const BATCHES = Number(process.env.BENCH_BATCHES ?? 3000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);

export async function runBench(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'friction-restart-bench-'));
  try {
    const stops: Stop[] = Array.from({ length: ROUNDS }, (_, i) => (i % 2 === 0 ? 'SIGTERM' : 'SIGKILL'));
    const r = await runRestartRounds({
      dataDir,
      stops,
      batchesPerRound: BATCHES,
      eventsPerBatch: 2,
      deploysPerRound: 3,
      concurrency: CONNECTIONS,
      drainTimeoutMs: 600_000,
      onRound: (x, i) =>
        process.stdout.write(
          `round ${i + 1}/${ROUNDS}: ${x.accepted} batches answered 202, ${x.stop} with ${x.backlogAtStop} messages unprocessed, exited in ${x.exitMs} ms\n`,
        ),
    });
    const ok = r.eventsStored === r.eventsAccepted && r.distinctStored === r.eventsStored;
    process.stdout.write(
      `\nrestart chaos: ${ROUNDS} rounds (SIGTERM and SIGKILL alternating), ${r.eventsAccepted} events answered 202, ` +
        `${r.eventsStored} stored (${r.distinctStored} distinct) ${ok ? 'OK' : 'LOST OR DUPLICATED'}; ` +
        `deploy webhooks ${r.webhooksReceived}/${r.deploysRecorded} delivered\n` +
        `load average ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')} (2 cores shared)\n`,
    );
    if (!ok || r.webhooksReceived !== r.deploysRecorded) process.exitCode = 1;
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
