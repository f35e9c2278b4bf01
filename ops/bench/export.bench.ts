/**
 * `npm run bench -- export [--events 1000000] [--every 100000] [--reuse <database> --key <svc_sec_…>]`: the CSV export
 * (`GET /v1/query/export/events.csv`) of a site's events from an API role process on the PostgreSQL server, over data
 * written by `friction demo --events` (the query bench's generator). Prints, every `--every` records, the rate of that
 * stretch and the API process's resident memory, then the whole export's rate beside its floor measured in the same
 * run: the same rows, columns, order and environment as CSV straight from PostgreSQL (`COPY (select …) TO STDOUT`, no
 * HTTP, no Node presenter), as a ratio. The target: 1M rows at a steady rate with flat RSS.
 */
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { EXPORT_COLUMNS } from '../../api/routes/export/export.queries.ts';
import { processRssMiB, stop } from './harness.ts';
import { arg, readBenchDatabase, startBenchApi } from './read-fixture.ts';

interface Stretch {
  records: number;
  seconds: number;
  rssMiB: number;
}

/** Reads a CSV stream to its end, counting records (newlines); `onRecords` every `every` records. */
async function countRecords(
  stream: AsyncIterable<Uint8Array>,
  every: number,
  onRecords: (records: number) => void,
): Promise<{ records: number; bytes: number }> {
  let bytes = 0;
  let records = 0;
  let next = every;
  for await (const chunk of stream) {
    bytes += chunk.length;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) {
      records++;
      if (records === next) {
        next += every;
        onRecords(records);
      }
    }
  }
  return { records, bytes };
}

export async function runBench(args: string[]): Promise<void> {
  const events = Number(arg(args, 'events', '1000000'));
  const every = Number(arg(args, 'every', '100000'));
  const reuse = args.includes('--reuse') ? arg(args, 'reuse', '') : undefined;
  const fixture = await readBenchDatabase(
    'export',
    events,
    reuse === undefined ? undefined : { database: reuse, key: arg(args, 'key', '') },
  );
  const { site } = fixture;
  const dbUrl = fixture.url;
  let api: ChildProcess | undefined;
  try {
    const started = await startBenchApi(dbUrl);
    api = started.api;
    const url = `${started.base}/v1/query/export/events.csv?site_id=${site.siteId}`;
    const headers = { authorization: `Bearer ${site.secretKey}` };

    // The floor first, so the API's run does not find the rows warmer in the cache than the floor did: the same rows as
    // the route's default (production, everything before now, oldest first) as PostgreSQL's own CSV.
    const now = new Date().toISOString();
    const floorSql = `copy (select ${EXPORT_COLUMNS.join(', ')} from events where site_id = '${site.siteId}'
      and ts < '${now}' and environment is distinct from 'staging' order by ts) to stdout with (format csv, header)`;
    const client = new pg.Client({ connectionString: dbUrl });
    await client.connect();
    const floorStart = performance.now();
    const floor = await countRecords(client.query(copyTo(floorSql)), every, () => {});
    const floorSeconds = (performance.now() - floorStart) / 1000;
    await client.end();

    const rss0 = processRssMiB(api.pid);
    const stretches: Stretch[] = [];
    const start = performance.now();
    let last = start;
    let lastRecords = 0;
    process.stdout.write(
      `\nexport of site ${site.siteId} (API process RSS before: ${rss0.toFixed(0)} MiB)\n      records   stretch rows/s   RSS MiB\n`,
    );
    const res = await new Promise<http.IncomingMessage>((resolve, reject) =>
      http.get(url, { headers }, resolve).on('error', reject),
    );
    if (res.statusCode !== 200) throw new Error(`export answered ${res.statusCode}`);
    const got = await countRecords(res, every, (records) => {
      const t = performance.now();
      const s: Stretch = {
        records: records - lastRecords,
        seconds: (t - last) / 1000,
        rssMiB: processRssMiB(api?.pid),
      };
      stretches.push(s);
      last = t;
      lastRecords = records;
      process.stdout.write(
        `${records.toLocaleString('en-US').padStart(13)} ${Math.round(s.records / s.seconds)
          .toLocaleString('en-US')
          .padStart(16)} ${s.rssMiB.toFixed(0).padStart(9)}\n`,
      );
    });
    const seconds = (performance.now() - start) / 1000;
    const rates = stretches.map((s) => s.records / s.seconds);
    const rss = stretches.map((s) => s.rssMiB);
    const mib = (b: number) => (b / 2 ** 20).toFixed(0);
    process.stdout.write(
      [
        '',
        `export: ${(got.records - 1).toLocaleString('en-US')} records (${mib(got.bytes)} MiB) in ${seconds.toFixed(1)} s: ${Math.round((got.records - 1) / seconds).toLocaleString('en-US')} rows/s`,
        `floor (COPY … TO STDOUT csv): ${(floor.records - 1).toLocaleString('en-US')} records (${mib(floor.bytes)} MiB) in ${floorSeconds.toFixed(1)} s: ${Math.round((floor.records - 1) / floorSeconds).toLocaleString('en-US')} rows/s; the export takes ${(seconds / floorSeconds).toFixed(2)}× the floor's time`,
        `steady rate: stretches from ${Math.round(Math.min(...rates)).toLocaleString('en-US')} to ${Math.round(Math.max(...rates)).toLocaleString('en-US')} rows/s (slowest/fastest ${(Math.min(...rates) / Math.max(...rates)).toFixed(2)}); last stretch/first ${(rates.at(-1)! / rates[0]).toFixed(2)}`,
        `RSS: ${rss0.toFixed(0)} MiB before, ${Math.min(...rss).toFixed(0)}-${Math.max(...rss).toFixed(0)} MiB during, last - first stretch ${(rss.at(-1)! - rss[0]).toFixed(1)} MiB`,
        '',
      ].join('\n'),
    );
    if (got.records !== floor.records)
      process.stdout.write(`NOTE: the export sent ${got.records} lines and the floor ${floor.records}\n`);
  } finally {
    await stop(api);
    await fixture.close(args.includes('--keep'));
  }
}
