/**
 * The bounded subset of `npm run chaos` that runs with the tests: on the suite's own NATS, PostgreSQL and Redis, a
 * processor SIGKILLed while its partner takes over, a processor paused past its lease and resumed, and the
 * database's backends terminated mid-batch; each under steady SDK traffic through ingest, with 0 lost and 0
 * duplicated.
 */
import test from 'ava';
import { formatTable, runScenario, scenarios, type Cast } from './scenarios.ts';
import { startChaosWorld } from './world.ts';

test('chaos subset: takeover, a stale owner resumed, backends terminated: 0 lost, 0 duplicated', async (t) => {
  const leaseTtlMs = 2000;
  const world = await startChaosWorld({ leaseTtlMs });
  t.teardown(() => world.close());
  const cast: Cast = {
    ingest: await world.spawnRole('ingest'),
    processors: [await world.spawnRole('processor'), await world.spawnRole('processor')],
  };
  const wanted = ['two processors, one killed', 'paused (SIGSTOP)', 'backends terminated'];
  const rows = [];
  for (const s of scenarios({ kills: 0, leaseTtlMs }).filter((x) => wanted.some((w) => x.name.includes(w))))
    rows.push(await runScenario(world, cast, s));
  t.log(`\n${formatTable(rows)}`);
  t.is(rows.length, 3);
  for (const r of rows) {
    t.true(r.accepted > 0, `${r.scenario}: traffic was accepted`);
    t.is(r.lost, 0, `${r.scenario}: lost`);
    t.is(r.duplicates, 0, `${r.scenario}: duplicated`);
  }
});
