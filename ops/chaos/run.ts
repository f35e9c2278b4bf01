/**
 * `npm run chaos`: every scenario of issue 32 on the suite's own services, under steady SDK traffic through ingest,
 * printed as one table row per scenario (accepted vs stored, duplicates, recovery time, what ingest answered).
 * The last row runs on a three-node NATS cluster of its own (ingest and two processors of their own, R3 streams),
 * which loses the node leading the EVENTS stream. Target: 0 lost and 0 duplicated in every row. CHAOS_KILLS (10) sets how often the first scenario SIGKILLs a
 * processor; CHAOS_ONLY=<text> runs the scenarios whose name contains it.
 */
import {
  CLUSTER_SCENARIO,
  clusterEnv,
  clusterScenario,
  formatTable,
  runScenario,
  scenarios,
  type Cast,
  type ChaosRow,
} from './scenarios.ts';
import { startNatsCluster } from './nats-cluster.ts';
import { killRole, startChaosWorld } from './world.ts';

const leaseTtlMs = 2000;
const world = await startChaosWorld({ leaseTtlMs });
const rows: ChaosRow[] = [];
try {
  const cast: Cast = {
    ingest: await world.spawnRole('ingest'),
    processors: [await world.spawnRole('processor'), await world.spawnRole('processor')],
  };
  const only = process.env.CHAOS_ONLY;
  for (const s of scenarios({ kills: Number(process.env.CHAOS_KILLS ?? 10), leaseTtlMs })) {
    if (only && !s.name.includes(only)) continue;
    process.stderr.write(`chaos: ${s.name}\n`);
    rows.push(await runScenario(world, cast, s));
  }
  if (!only || CLUSTER_SCENARIO.includes(only)) {
    // Its own ingest and processors on a three-node cluster; the single-node cast stops first (both would fence the
    // same partitions in the one database).
    for (const r of [cast.ingest, ...cast.processors]) await killRole(r);
    process.stderr.write(`chaos: ${CLUSTER_SCENARIO}\n`);
    const nats = await startNatsCluster();
    try {
      const env = clusterEnv(nats);
      const clusterCast: Cast = {
        ingest: await world.spawnRole('ingest', env),
        processors: [await world.spawnRole('processor', env), await world.spawnRole('processor', env)],
      };
      rows.push(await runScenario(world, clusterCast, clusterScenario(nats)));
      for (const r of [clusterCast.ingest, ...clusterCast.processors]) await killRole(r);
    } finally {
      await nats.dispose();
    }
  }
} finally {
  await world.close();
}
process.stdout.write(`\n${formatTable(rows)}\n`);
const bad = rows.filter((r) => r.lost !== 0 || r.duplicates !== 0);
process.stdout.write(
  bad.length ? `\n${bad.length} scenario(s) lost or duplicated events\n` : '\n0 lost, 0 duplicated in every row\n',
);
process.exitCode = bad.length ? 1 : 0;
