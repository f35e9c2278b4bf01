/**
 * Restart chaos against the embedded default as a user runs it (issue 31, item 2): `friction start` as its own OS
 * process on a data directory, batches sent as fast as it answers, and at the last 202 of each round the process is
 * stopped (SIGTERM) or killed (SIGKILL) with its backlog unprocessed, then started again on the same data. Each
 * round also records deploys, whose `deploy.recorded` webhooks are queued through the outbox and the bus to a
 * receiver on 127.0.0.1. At the end the last process drains, stops, and the database is read directly: every event
 * answered 202 must be stored once, every recorded deploy's webhook must have arrived.
 * Used by ops/e2e/embedded-restart.int.test.ts and `npm run bench -- restart`.
 */
import { eventually } from '../../shared/testing/eventually.ts';
import { postJson } from '../../shared/testing/http-client.ts';
import { freePort } from '../../shared/testing/processes.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDatabase } from '../../shared/db/connection.ts';

import { sdkBatch } from './sdk-batch.ts';

export type Stop = 'SIGTERM' | 'SIGKILL';

export interface RestartRound {
  stop: Stop;
  /** Batches answered 202 in the round (each with `eventsPerBatch` events). */
  accepted: number;
  /** Messages the processor had not committed when the signal came (its lag on /metrics just before). */
  backlogAtStop: number;
  /** How long the process took to exit after the signal. */
  exitMs: number;
}

export interface RestartResult {
  rounds: RestartRound[];
  eventsAccepted: number;
  eventsStored: number;
  distinctStored: number;
  deploysRecorded: number;
  webhooksReceived: number;
  /** From the last start ready to every message processed and every webhook received (or the drain timeout). */
  drainMs: number;
}

const cliPath = new URL('../cli.ts', import.meta.url).pathname;

function startFriction(dataDir: string, port: number, env: Record<string, string>): ChildProcess {
  const full: Record<string, string | undefined> = {
    ...process.env,
    FRICTION_DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    // The webhook receiver is on loopback.
    OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true',
    // One client sends as fast as it is answered: the per-key limits are not what this measures.
    INGEST_RATE_LIMIT_PER_MIN: '10000000',
    WRITE_RATE_LIMIT_PER_MIN: '100000',
    ...env,
  };
  for (const k of ['DATABASE_URL', 'NATS_URL', 'REDIS_URL', 'PUBLIC_BASE_URL']) delete full[k];
  return spawn(process.execPath, [cliPath, 'start'], { env: full, stdio: ['ignore', 'ignore', 'inherit'] });
}

const exited = (p: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (p.exitCode !== null || p.signalCode !== null) return resolve();
    p.once('exit', () => resolve());
  });

async function metric(base: string, name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n'))
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `))
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

/** Receives webhooks and keeps the deploy versions they name. */
async function webhookReceiver(): Promise<{ server: Server; url: string; versions: Set<string> }> {
  const versions = new Set<string>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      for (const m of body.matchAll(/chaos-\d+/g)) versions.add(m[0]);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, versions };
}

export async function runRestartRounds(o: {
  dataDir: string;
  stops: readonly Stop[];
  batchesPerRound: number;
  eventsPerBatch: number;
  deploysPerRound: number;
  /** Requests in flight. */
  concurrency?: number;
  /** Settings of the rounds' processes (the last one, which drains, runs with the defaults). */
  env?: Record<string, string>;
  onRound?: (r: RestartRound, i: number) => void;
  /** How long the last process may take to drain the backlog and deliver the webhooks. */
  drainTimeoutMs?: number;
}): Promise<RestartResult> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const receiver = await webhookReceiver();
  let proc: ChildProcess | undefined;
  const acceptedIds = new Set<string>();
  const deployed = new Set<string>();
  const rounds: RestartRound[] = [];
  let deploySeq = 0;
  let drainMs = 0;
  const startAndWait = async (env: Record<string, string>) => {
    const p = startFriction(o.dataDir, port, env);
    proc = p;
    await eventually(
      async () => {
        if (p.exitCode !== null || p.signalCode !== null) throw new Error(`friction start exited (${p.exitCode})`);
        return (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200;
      },
      { timeoutMs: 120_000, stepMs: 50 },
    );
    return JSON.parse(readFileSync(join(o.dataDir, 'credentials.json'), 'utf8')) as {
      org_id: string;
      publishable_key: string;
      secret_key: string;
      owner: { token: string };
    };
  };
  try {
    for (const [i, stop] of o.stops.entries()) {
      const creds = await startAndWait(o.env ?? {});
      if (i === 0) {
        const hook = await postJson(
          `${base}/v1/manage/webhooks`,
          { org_id: creds.org_id, url: receiver.url, events: ['deploy.recorded'] },
          { authorization: `Bearer ${creds.owner.token}` },
        );
        if (hook.status !== 201) throw new Error(`webhook not created: ${hook.status} ${JSON.stringify(hook.body)}`);
      }
      let next = 0;
      let accepted = 0;
      const sendBatches = async () => {
        while (next < o.batchesPerRound) {
          next++;
          const b = sdkBatch({ events: o.eventsPerBatch, sessionId: `chaos-${i}-${next % 50}`, page: `/p${next % 9}` });
          const r = await postJson(`${base}/v1/ingest`, b, { authorization: `Bearer ${creds.publishable_key}` });
          if (r.status !== 202) throw new Error(`ingest answered ${r.status}: ${JSON.stringify(r.body)}`);
          accepted++;
          for (const e of b.events) acceptedIds.add(e.id as string);
        }
      };
      const recordDeploys = async () => {
        for (let d = 0; d < o.deploysPerRound; d++) {
          const version = `chaos-${++deploySeq}`;
          const r = await postJson(`${base}/v1/deploys`, { version }, { authorization: `Bearer ${creds.secret_key}` });
          if (r.status !== 201) throw new Error(`deploy answered ${r.status}: ${JSON.stringify(r.body)}`);
          deployed.add(version);
        }
      };
      await Promise.all([...Array.from({ length: o.concurrency ?? 16 }, sendBatches), recordDeploys()]);
      const backlogAtStop = await metric(base, 'friction_processor_lag_messages');
      const p = proc!;
      const t0 = performance.now();
      p.kill(stop);
      await exited(p);
      const round = { stop, accepted, backlogAtStop, exitMs: Math.round(performance.now() - t0) };
      rounds.push(round);
      o.onRound?.(round, i);
    }
    // The last start drains what every round left.
    await startAndWait({});
    const drainFrom = performance.now();
    await eventually(
      async () =>
        (await metric(base, 'friction_processor_lag_messages')) === 0 &&
        [...deployed].every((v) => receiver.versions.has(v)),
      { timeoutMs: o.drainTimeoutMs ?? 120_000, stepMs: 200 },
    ).catch(() => undefined);
    drainMs = Math.round(performance.now() - drainFrom);
    // Webhooks that did not arrive are counted below, not thrown.
    const last = proc!;
    last.kill('SIGTERM');
    await exited(last);
  } finally {
    if (proc && proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGKILL');
      await exited(proc);
    }
    receiver.server.closeAllConnections();
    receiver.server.close();
  }
  const handle = await openDatabase({ dataDir: o.dataDir });
  try {
    const row = (
      await sql<{ n: number; d: number }>`select count(*)::int as n, count(distinct id)::int as d from events`.execute(
        handle.db,
      )
    ).rows[0];
    return {
      rounds,
      eventsAccepted: acceptedIds.size,
      eventsStored: row.n,
      distinctStored: row.d,
      deploysRecorded: deployed.size,
      webhooksReceived: [...deployed].filter((v) => receiver.versions.has(v)).length,
      drainMs,
    };
  } finally {
    await handle.close();
  }
}
