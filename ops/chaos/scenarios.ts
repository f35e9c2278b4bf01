import { connect } from '@nats-io/transport-node';
import pg from 'pg';

import { openDatabase } from '../../shared/db/connection.ts';
import { insertOrg, provisionSite } from '../../shared/tenancy/provision.ts';
import { topology } from '../../shared/contracts/subjects.ts';
import { Traffic } from './traffic.ts';
import { killRole, until, type ChaosWorld, type Role } from './world.ts';
import type { NatsCluster } from './nats-cluster.ts';

/** One row of the chaos table. */
export interface ChaosRow {
  scenario: string;
  accepted: number;
  stored: number;
  lost: number;
  duplicates: number;
  /** From the end of the fault until everything accepted was stored. */
  recoveryMs: number;
  /** What ingest answered during the scenario, by kind. */
  answers: string;
  note?: string;
}

/** The processes a scenario acts on: ingest and two processors (a scenario leaves two running). */
export interface Cast {
  ingest: Role;
  processors: Role[];
}

interface Scenario {
  name: string;
  /** Injects the fault while traffic flows; resolves when the fault is over (services back), with a note. */
  fault(world: ChaosWorld, cast: Cast): Promise<string | undefined>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Replaces a processor that was killed by a fresh one (same settings). */
async function respawn(world: ChaosWorld, cast: Cast, i: number): Promise<void> {
  await killRole(cast.processors[i]);
  cast.processors[i] = await world.spawnRole('processor');
}

const ownersNow = (world: ChaosWorld) =>
  world.query<{ owner: string; n: number }>('select owner, count(*)::int as n from partition_leases group by owner');

async function metric(role: Role, name: string, label = ''): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${role.port}/metrics`)).text();
  const re = new RegExp(`^${name}${label ? `\\{[^}]*${label}[^}]*\\}` : ''} (\\S+)`, 'm');
  return Number(re.exec(text)?.[1] ?? 0);
}

/** A service stopped mid-stream for `ms`, then started again. */
const down = (name: string, service: 'nats' | 'postgres' | 'redis', ms: number): Scenario => ({
  name,
  async fault(world) {
    await world[service].stop();
    await sleep(ms);
    await world[service].start();
    return undefined;
  },
});

export function scenarios(o: { kills: number; leaseTtlMs: number }): Scenario[] {
  return [
    {
      name: `processor SIGKILLed ${o.kills} times`,
      async fault(world, cast) {
        for (let k = 0; k < o.kills; k++) {
          await sleep(300 + Math.random() * 500);
          await respawn(world, cast, k % 2);
        }
        return undefined;
      },
    },
    {
      name: 'two processors, one killed: the other takes its partitions',
      async fault(world, cast) {
        const [victim, survivor] = cast.processors;
        const t0 = performance.now();
        await killRole(victim);
        await until('the survivor holds all 16 partitions', async () => {
          const o = await ownersNow(world);
          return o.length === 1 && o[0].n === 16 && o[0].owner.includes(`-${survivor.proc.pid}-`) ? true : undefined;
        });
        const ms = Math.round(performance.now() - t0);
        cast.processors[0] = await world.spawnRole('processor');
        return `takeover ${ms} ms (TTL ${o.leaseTtlMs} ms)`;
      },
    },
    {
      name: 'processor paused (SIGSTOP) past its lease, then resumed',
      async fault(_world, cast) {
        const paused = cast.processors[0];
        paused.proc.kill('SIGSTOP');
        await sleep(o.leaseTtlMs * 3);
        paused.proc.kill('SIGCONT');
        // Resumed, it must find its leases gone (or its batch fenced) and stop writing those partitions.
        const events = await until(
          'the resumed processor gave its stale leases up',
          async () => {
            const lost = await metric(paused, 'friction_processor_partition_lease_events_total', 'event="lost"');
            const fenced = await metric(paused, 'friction_processor_partition_lease_events_total', 'event="fenced"');
            return lost + fenced > 0 ? { lost, fenced } : undefined;
          },
          30_000,
        );
        return `stale owner: ${events.lost} leases lost, ${events.fenced} batches fenced`;
      },
    },
    down('NATS restarted mid-stream', 'nats', 2000),
    {
      name: 'PostgreSQL backends terminated mid-batch',
      async fault(world) {
        let terminated = 0;
        for (let k = 0; k < 5; k++) {
          await sleep(300);
          const rows = await world.query<{ n: number }>(
            `select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
             where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`,
          );
          terminated += rows[0]?.n ?? 0;
        }
        return `${terminated} backends terminated`;
      },
    },
    down('PostgreSQL restarted', 'postgres', 2000),
    {
      name: 'PostgreSQL read-only (default_transaction_read_only)',
      async fault(world) {
        await world.query('alter system set default_transaction_read_only = on');
        await world.query('select pg_reload_conf()');
        await sleep(3000);
        // On one connection of its own, read-only too now: it turns that off for itself first.
        const c = new pg.Client({ connectionString: world.env.DATABASE_URL });
        await c.connect();
        try {
          await c.query('set default_transaction_read_only = off');
          await c.query('alter system reset default_transaction_read_only');
          await c.query('select pg_reload_conf()');
        } finally {
          await c.end();
        }
        return undefined;
      },
    },
    down('Redis down', 'redis', 3000),
    {
      name: 'a poison message on the stream',
      async fault(world) {
        const t = topology('chaos', 16);
        const nc = await connect({ servers: new URL(world.env.NATS_URL).host });
        const { jetstream } = await import('@nats-io/jetstream');
        await jetstream(nc).publish(t.eventSubject('00000000-0000-4000-8000-000000000000'), 'not json at all');
        await nc.drain();
        const dead = await until('the poison message dead-lettered', async () => {
          const r = await world.query<{ n: number }>('select count(*)::int as n from dead_letters');
          return r[0].n > 0 ? r[0].n : undefined;
        });
        return `${dead} dead letter(s)`;
      },
    },
  ];
}

/** The cast's settings for the three-node cluster: its own stream prefix, streams and lease bucket replicated 3 times. */
export function clusterEnv(cluster: NatsCluster): Record<string, string> {
  return { NATS_URL: cluster.url, STREAM_PREFIX: 'chaoscl', NATS_STREAM_REPLICAS: '3' };
}

export const CLUSTER_SCENARIO = 'three-node NATS cluster, the stream leader killed';

/**
 * A three-node NATS cluster loses the node that leads the EVENTS stream (SIGKILL) while traffic flows: the other two
 * hold a quorum of the R3 stream and elect a new leader, and the roles' clients fail over to them. The node stays
 * down until the row is counted.
 */
export function clusterScenario(cluster: NatsCluster): Scenario {
  return {
    name: CLUSTER_SCENARIO,
    async fault() {
      const nc = await connect({ servers: new URL(cluster.url).host });
      let leader: string | undefined;
      try {
        const { jetstreamManager } = await import('@nats-io/jetstream');
        leader = (await (await jetstreamManager(nc)).streams.info(topology('chaoscl', 16).eventsStream)).cluster
          ?.leader;
      } finally {
        await nc.close();
      }
      const victim = cluster.nodes.find((n) => n.name === leader) ?? cluster.nodes[0]!;
      const t0 = performance.now();
      await victim.stop();
      // Traffic goes on for a while on the two nodes left.
      await sleep(3000);
      return `node ${victim.name} (stream leader: ${leader ?? 'unknown'}) killed ${Math.round(performance.now() - t0)} ms before the fault ended; left down`;
    },
  };
}

/** Runs one scenario on its own site under steady traffic and returns its row. */
export async function runScenario(world: ChaosWorld, cast: Cast, s: Scenario): Promise<ChaosRow> {
  const handle = await openDatabase({ url: world.env.DATABASE_URL, dataDir: '' });
  let site: { siteId: string; publishableKey: string };
  try {
    const orgId = await insertOrg(handle.db, { name: `chaos ${s.name}`, plan: 'enterprise' });
    site = await provisionSite(handle.db, { orgId, name: 'chaos', url: 'https://chaos.example' });
  } finally {
    await handle.close();
  }
  const traffic = new Traffic(`http://127.0.0.1:${cast.ingest.port}/v1/ingest`, site.publishableKey);
  traffic.start();
  await sleep(1000);
  const note = await s.fault(world, cast);
  const faultOver = performance.now();
  await sleep(1000);
  await traffic.stop();
  const count = () =>
    world
      .query<{ n: number; d: number }>(
        'select count(*)::int as n, count(distinct id)::int as d from events where site_id = $1',
        [site.siteId],
      )
      .then((r) => r[0]);
  const accepted = traffic.accepted.size;
  let final = await count().catch(() => ({ n: 0, d: 0 }));
  const deadline = Date.now() + 120_000;
  while (final.n < accepted && Date.now() < deadline) {
    await sleep(200);
    final = await count().catch(() => final);
  }
  return {
    scenario: s.name,
    accepted,
    stored: final.d,
    lost: accepted - final.d,
    duplicates: final.n - final.d,
    recoveryMs: Math.round(performance.now() - faultOver),
    answers: [...traffic.answers].map(([k, v]) => `${k}: ${v}`).join(', '),
    note,
  };
}

export function formatTable(rows: readonly ChaosRow[]): string {
  const head = ['scenario', 'accepted', 'stored', 'lost', 'dup', 'recovery ms', 'ingest answered', 'note'];
  const cells = rows.map((r) => [
    r.scenario,
    String(r.accepted),
    String(r.stored),
    String(r.lost),
    String(r.duplicates),
    String(r.recoveryMs),
    r.answers,
    r.note ?? '',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c: string[]) => `| ${c.map((x, i) => x.padEnd(widths[i])).join(' | ')} |`;
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}
