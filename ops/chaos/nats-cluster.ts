/**
 * A three-node NATS cluster with JetStream on free ports, for the chaos row that loses one node: each node a
 * nats-server process of its own (its own store directory), routed to the other two. Roles connect to node 0 and
 * learn the others from the cluster's gossip, as clients of a real cluster do.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { freePort } from '../../shared/testing/processes.ts';
import { until } from './world.ts';

export interface ClusterNode {
  name: string;
  port: number;
  /** SIGKILL: a crashed node, no goodbye to its routes or clients. */
  stop(): Promise<void>;
  start(): Promise<void>;
}

export async function startNatsCluster(size = 3, bin = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server') {
  const dir = mkdtempSync(join(tmpdir(), 'friction-nats-cluster-'));
  const ports = await Promise.all(Array.from({ length: size }, async () => [await freePort(), await freePort()]));
  const routes = ports.map(([, cluster]) => `nats://127.0.0.1:${cluster}`).join(',');
  const nodes: ClusterNode[] = ports.map(([port, cluster], i) => {
    let proc: ChildProcess | undefined;
    const name = `n${i}`;
    return {
      name,
      port: port!,
      async start() {
        proc = spawn(
          bin,
          [
            ...['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', join(dir, name)],
            ...['--server_name', name, '--cluster_name', 'chaos', '--cluster', `nats://127.0.0.1:${cluster}`],
            ...['--routes', routes],
          ],
          { stdio: 'ignore' },
        );
      },
      async stop() {
        const p = proc;
        if (!p || p.exitCode !== null || p.signalCode !== null) return;
        await new Promise<void>((r) => {
          p.once('exit', () => r());
          p.kill('SIGKILL');
        });
      },
    };
  });
  for (const n of nodes) await n.start();
  const url = `nats://127.0.0.1:${nodes[0]!.port}`;
  // JetStream answers once the nodes have found each other and elected a meta leader.
  await until(
    'the NATS cluster serving JetStream',
    async () => {
      const nc = await connect({ servers: `127.0.0.1:${nodes[0]!.port}`, timeout: 2000 });
      try {
        const info = await (await jetstreamManager(nc)).getAccountInfo();
        return info ? true : undefined;
      } finally {
        await nc.close();
      }
    },
    60_000,
    250,
  );
  return {
    url,
    nodes,
    async dispose() {
      await Promise.all(nodes.map((n) => n.stop()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type NatsCluster = Awaited<ReturnType<typeof startNatsCluster>>;
