/**
 * `npm run bench -- alerts`:
 *  1. alert latency: while background traffic runs at BENCH_ALERT_RATE events/s (default 5,000), probe batches push a
 *     fresh page over its budget; latency = probe sent → signed webhook received by a local receiver (score written,
 *     rule evaluated, alert + outbox committed, relayed to NOTIFY, fanned out, delivered);
 *  2. dispatcher throughput, in alternating rounds: N queued deliveries sent by the dispatcher to a local receiver, against a bare loop
 *     that signs and POSTs the same bodies with the same concurrency (no database, no retries, no log); with the CPU
 *     each side spends per delivery, in this process and in the database's backends (steadier than rates on a
 *     shared machine).
 *  0. the processor's tick at scale (alert-tick.ts: 10k pages × 7 rules, page_pattern unset) and the batches it lets
 *     through; BENCH_ALERT_PARTS=tick runs only this part.
 * Real PostgreSQL and NATS (BENCH_DATABASE_URL, NATS_URL); every role in this process.
 */
import http from 'node:http';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { AddressInfo } from 'node:net';
import { InstanceKeys } from '../../shared/auth/instance-keys.ts';
import { seal } from '../../shared/auth/secret-box.ts';
import { closeInfra, openInfra } from '../../shared/infra.ts';
import { createLogger } from '../../shared/logger.ts';
import { eventBody, eventIdOf, signedHeaders, signingKey } from '../../shared/notify/webhook-event.ts';
import { insertOrg, provisionSite } from '../../shared/tenancy/provision.ts';
import { ingestRole } from '../../ingest/main.ts';
import { processorRole } from '../../processor/main.ts';
import { dispatcherRole } from '../../processor/dispatcher/main.ts';
import { closeServer, serveRoles } from '../server.ts';
import { openBenchEnvironment, processCpuSeconds } from './harness.ts';
import { percentile } from './load.ts';
import { sdkBatch } from '../testing/sdk-batch.ts';
import { benchAlertTick, seedTickScale } from './alert-tick.ts';
import { insertWebhookEndpointRow } from '../testing/rows.ts';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const RATE = Number(process.env.BENCH_ALERT_RATE ?? 5000);
const SECONDS = Number(process.env.BENCH_ALERT_SECONDS ?? 20);
const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 4000);
const ROUNDS = Number(process.env.BENCH_DELIVERY_ROUNDS ?? 5);
const CONCURRENCY = 32;
const EVENTS_PER_BATCH = 50;

export async function runBench(): Promise<void> {
  const bench = await openBenchEnvironment(NATS_URL);
  const received = new Map<string, number>();
  const receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.set(String(req.headers['webhook-id']), performance.now());
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const rxUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const config = bench.config({ OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' });
  const log = createLogger('warn');
  const infra = await openInfra(config, log);
  const db = infra.database.db;
  try {
    const orgId = await insertOrg(db, { name: 'bench', plan: 'pro', sessionLimit: null });
    const site = await provisionSite(db, { orgId, name: 'bench', url: 'https://bench.example' });
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const sealKey = await new InstanceKeys(db, config).sealKey();
    const endpointId = await insertWebhookEndpointRow(db, orgId, rxUrl, { secret_sealed: seal(sealKey, secret) });
    await db
      .insertInto('alert_rules')
      .values({
        id: randomUUID(),
        site_id: site.siteId,
        name: 'probe budget',
        trigger_type: 'budget',
        threshold: 0,
        cooldown_minutes: 60,
        channels: ['webhook'],
        page_pattern: '/probe-*',
        slack_channel: null,
        enabled: true,
        last_fired_at: null,
      })
      .execute();
    await seedTickScale(db);

    const processor = await processorRole(infra).start();
    // The dispatcher's clock: moved back while a throughput round queues its deliveries (see there).
    let dispatcherSkewMs = 0;
    const dispatcher = await dispatcherRole(infra, { now: () => Date.now() + dispatcherSkewMs }).start();
    const server = await serveRoles('bench', [ingestRole(infra)], log, 0, '127.0.0.1');
    const port = (server.address() as AddressInfo).port;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    const post = (body: string) =>
      new Promise<number>((resolve) => {
        const req = http.request(
          {
            agent,
            host: '127.0.0.1',
            port,
            path: '/v1/ingest',
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              authorization: `Bearer ${site.publishableKey}`,
              'content-length': Buffer.byteLength(body),
            },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', () => resolve(0));
        req.end(body);
      });

    // 0. The tick at scale (issue 31): its duration, and the batches it lets through.
    const tickRows = await benchAlertTick({
      tick: () => processor.running.tick!(),
      post,
    });
    if (process.env.BENCH_ALERT_PARTS === 'tick') {
      printTable([['measure', 'value', 'baseline', 'ratio', 'target'], ...tickRows]);
      await processor.running.stop();
      await dispatcher.running.stop();
      await closeServer(server);
      return;
    }

    // 1. Alert latency under load.
    process.stdout.write(`alerts bench: background ${RATE} events/s for ${SECONDS} s, one budget probe per second\n`);
    const probes: { page: string; sentAt: number }[] = [];
    const started = performance.now();
    let failed = 0;
    let sentEvents = 0;
    const background = (async () => {
      const perTick = RATE / 10 / EVENTS_PER_BATCH; // batches per 100 ms
      let carry = 0;
      while (performance.now() - started < SECONDS * 1000) {
        const tick = performance.now();
        carry += perTick;
        const n = Math.floor(carry);
        carry -= n;
        const bodies = Array.from({ length: n }, (_, i) =>
          JSON.stringify(
            sdkBatch({ page: `/p-${(sentEvents + i) % 200}`, events: EVENTS_PER_BATCH, signal: 'dead_click' }),
          ),
        );
        sentEvents += n * EVENTS_PER_BATCH;
        void Promise.all(bodies.map(post)).then((s) => (failed += s.filter((x) => x !== 202).length));
        await new Promise((r) => setTimeout(r, Math.max(0, 100 - (performance.now() - tick))));
      }
    })();
    const probing = (async () => {
      await new Promise((r) => setTimeout(r, 2000)); // let the load settle
      for (let i = 0; performance.now() - started < (SECONDS - 1) * 1000; i++) {
        const page = `/probe-${i}`;
        probes.push({ page, sentAt: performance.now() });
        await post(JSON.stringify(sdkBatch({ page, events: 5 })));
        await new Promise((r) => setTimeout(r, 1000));
      }
    })();
    await Promise.all([background, probing]);
    // Wait for the last probes' alerts (at most 30 s).
    const alertIds = async () =>
      await db.selectFrom('alerts').select(['id', 'page']).where('site_id', '=', site.siteId).execute();
    const deadline = performance.now() + 30_000;
    let alerts = await alertIds();
    while (performance.now() < deadline && [...received.keys()].length < probes.length) {
      await new Promise((r) => setTimeout(r, 200));
      alerts = await alertIds();
    }
    const pageOfEvent = new Map(alerts.map((a) => [eventIdOf(`alert.triggered:${a.id}`), a.page]));
    const latencies: number[] = [];
    for (const [eventId, at] of received) {
      const page = pageOfEvent.get(eventId);
      const probe = probes.find((p) => p.page === page);
      if (probe) latencies.push(at - probe.sentAt);
    }
    const achieved = sentEvents / SECONDS;

    // 2. Dispatcher throughput against a bare signed POST loop, in ROUNDS alternating rounds (this machine's speed
    // drifts by tens of percent from one second to the next: a ratio is only fair between neighbouring rounds).
    await processor.running.stop();
    // CPU seconds of this process (receiver, and the bare loop or the dispatcher) and of the bench database's backends.
    const backends = async () =>
      (
        await sql<{ pid: number }>`select pid from pg_stat_activity where datname = current_database()`.execute(db)
      ).rows.map((r) => r.pid);
    const cpuNow = async () => {
      const u = process.cpuUsage();
      const pids = await backends();
      return { self: (u.user + u.system) / 1e6, pids, db: new Map(pids.map((p) => [p, processCpuSeconds(p)])) };
    };
    const cpuSince = async (before: Awaited<ReturnType<typeof cpuNow>>) => {
      const after = await cpuNow();
      let dbCpu = 0;
      for (const [pid, s] of after.db) if (Number.isFinite(s)) dbCpu += s - (before.db.get(pid) ?? 0);
      return { self: after.self - before.self, db: dbCpu };
    };
    /** Resolves once the receiver has `n` distinct webhook-ids (checked on every request, not polled). */
    const receivedAll = (n: number) =>
      new Promise<void>((resolve) => {
        const check = () => (received.size >= n ? (receiver.off('request', onRequest), resolve()) : undefined);
        const onRequest = (_req: http.IncomingMessage, res: http.ServerResponse) => res.once('finish', check);
        receiver.on('request', onRequest);
        check();
      });
    const u = new URL(rxUrl);
    const bareAgent = new http.Agent({ keepAlive: false });
    // The key is made once, as the dispatcher makes it once per endpoint secret.
    const bareKey = signingKey(secret);
    const bareRound = async (bodies: { id: string; body: string }[]) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < bodies.length) {
            const b = bodies[next++]!;
            await new Promise<void>((resolve) => {
              const req = http.request(
                {
                  agent: bareAgent,
                  host: u.hostname,
                  port: u.port,
                  path: u.pathname,
                  method: 'POST',
                  headers: signedHeaders(bareKey, b.id, Math.floor(Date.now() / 1000), b.body),
                },
                (res) => {
                  res.resume();
                  res.on('end', () => resolve());
                },
              );
              req.on('error', () => resolve());
              req.end(b.body);
            });
          }
        }),
      );
    };
    // BENCH_PROFILE_DIR: a V8 CPU profile of this process per round and side (the roles run in this process).
    const profileDir = process.env.BENCH_PROFILE_DIR;
    const inspector = profileDir ? new Session() : undefined;
    if (inspector) inspector.connect(), await inspector.post('Profiler.enable');
    const profiled = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
      if (!inspector) return work();
      await inspector.post('Profiler.start');
      try {
        return await work();
      } finally {
        const { profile } = await inspector.post('Profiler.stop');
        writeFileSync(`${profileDir}/alerts-${name}.cpuprofile`, JSON.stringify(profile));
      }
    };
    const rounds: {
      bare: { rate: number; self: number; db: number };
      disp: { rate: number; self: number; db: number; statements: number };
    }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const bodies = Array.from({ length: DELIVERIES }, (_, i) => {
        const id = eventIdOf(`bench:${round}:${i}:${randomUUID()}`);
        return {
          id,
          body: eventBody({
            id,
            type: 'alert.triggered',
            timestamp: new Date().toISOString(),
            site_id: site.siteId,
            data: { n: i, alert: { id: randomUUID(), page: '/x', rule_name: 'bench' } },
          }),
        };
      });
      received.clear();
      const bareCpu0 = await cpuNow();
      const bareStart = performance.now();
      await profiled(`bare-${round + 1}`, () => bareRound(bodies));
      const bareSeconds = (performance.now() - bareStart) / 1000;
      const bareCpu = await cpuSince(bareCpu0);

      // Queued while the dispatcher's clock is an hour behind (none is due to it yet), so queueing is not timed:
      // the round measures sending queued deliveries, the dispatcher's job, from its wake to the last received.
      received.clear();
      dispatcherSkewMs = -3_600_000;
      const now = new Date();
      for (let i = 0; i < bodies.length; i += 500) {
        await db
          .insertInto('notification_deliveries')
          .values(
            bodies.slice(i, i + 500).map((b) => ({
              id: randomUUID(),
              event_id: b.id,
              event_type: 'alert.triggered',
              org_id: orgId,
              site_id: site.siteId,
              channel: 'webhook',
              endpoint_id: endpointId,
              target: rxUrl,
              body: b.body,
              next_attempt_at: now,
            })),
          )
          .execute();
      }
      const allIn = receivedAll(bodies.length);
      const dispCpu0 = await cpuNow();
      const { stats } = dispatcher.running.dispatcher;
      const statements0 = stats.statements;
      const recorded0 = stats.recorded;
      const dispStart = performance.now();
      let dispSeconds = 0;
      await profiled(`dispatcher-${round + 1}`, async () => {
        dispatcherSkewMs = 0;
        dispatcher.running.dispatcher.wake();
        await Promise.race([allIn, new Promise((r) => setTimeout(r, 120_000))]);
        dispSeconds = (performance.now() - dispStart) / 1000;
        // CPU is counted until the last outcome is recorded (just after the receiver saw it), read from the
        // dispatcher's own counter: a query here would charge the bench's polling to the dispatcher.
        const until = performance.now() + 30_000;
        while (stats.recorded - recorded0 < bodies.length && performance.now() < until)
          await new Promise((r) => setTimeout(r, 5));
      });
      const dispCpu = await cpuSince(dispCpu0);
      rounds.push({
        bare: { rate: bodies.length / bareSeconds, ...bareCpu },
        disp: { rate: received.size / dispSeconds, ...dispCpu, statements: stats.statements - statements0 },
      });
    }
    const us = (seconds: number) => ((seconds * 1e6) / DELIVERIES).toFixed(0);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const ratios = rounds.map((r) => r.disp.rate / r.bare.rate);

    await dispatcher.running.stop();
    await closeServer(server);
    const table = [
      ['measure', 'value', 'baseline', 'ratio', 'target'],
      [`alert → webhook p50 ms @${Math.round(achieved)} events/s`, percentile(latencies, 50).toFixed(0), '', '', ''],
      [
        `alert → webhook p99 ms @${Math.round(achieved)} events/s`,
        percentile(latencies, 99).toFixed(0),
        '',
        '',
        '≤ 5000',
      ],
      ['probes alerted / sent', `${latencies.length} / ${probes.length}`, '', '', 'all'],
      ...rounds.map((r, i) => [
        `round ${i + 1}: deliveries/s (dispatcher vs bare signed POST loop)`,
        r.disp.rate.toFixed(0),
        r.bare.rate.toFixed(0),
        (r.disp.rate / r.bare.rate).toFixed(2),
        '',
      ]),
      [
        `deliveries/s, median of ${ROUNDS} rounds`,
        median(rounds.map((r) => r.disp.rate)).toFixed(0),
        median(rounds.map((r) => r.bare.rate)).toFixed(0),
        median(ratios).toFixed(2),
        '≥ 0.70',
      ],
      [
        'CPU µs per delivery, this process (receiver included), median',
        us(median(rounds.map((r) => r.disp.self))),
        us(median(rounds.map((r) => r.bare.self))),
        (median(rounds.map((r) => r.disp.self)) / median(rounds.map((r) => r.bare.self))).toFixed(2),
        '',
      ],
      [
        'CPU µs per delivery, PostgreSQL backends, median',
        us(median(rounds.map((r) => r.disp.db))),
        us(median(rounds.map((r) => r.bare.db))),
        '',
        '',
      ],
      [
        'dispatcher statements per 100 deliveries (claims and records), median',
        ((median(rounds.map((r) => r.disp.statements)) * 100) / DELIVERIES).toFixed(1),
        '',
        '',
        '',
      ],
      ['failed ingest requests', String(failed), '', '', '0'],
      ...tickRows,
    ];
    printTable(table);
    process.stdout.write(
      `  (${CONCURRENCY} concurrent sends on both sides; every role, PostgreSQL and NATS on this ${(await import('node:os')).cpus().length}-core machine)\n`,
    );
  } finally {
    await closeInfra(infra);
    await new Promise<void>((r) => receiver.close(() => r()));
    await bench.close();
  }
}

function printTable(table: string[][]): void {
  const widths = table[0]!.map((_, c) => Math.max(...table.map((r) => r[c]!.length)));
  for (const r of table) process.stdout.write(`  ${r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ')}\n`);
}
