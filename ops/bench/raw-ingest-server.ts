/**
 * The raw ingest baseline: a bare node:http handler that reads the body, parses it, and publishes it to JetStream
 * with a msg id, answering 202 after the PubAck. No framework, validation, auth or limits: the floor our ingest
 * is compared against. Run as a child process by the pipeline bench.
 */
import http from 'node:http';
import { connect } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';

const url = new URL(process.env.NATS_URL ?? 'nats://127.0.0.1:4222');
const subject = process.env.RAW_SUBJECT ?? 'raw.events';
const nc = await connect({ servers: `${url.hostname}:${url.port || 4222}`, noAsyncTraces: true });
const js = jetstream(nc);
let n = 0;
const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      await js.publish(subject, JSON.stringify(body), { msgID: `raw-${process.pid}-${n++}` });
      res.writeHead(202, { 'content-type': 'application/json' }).end('{"data":{},"error":null}');
    } catch {
      res.writeHead(503).end();
    }
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as { port: number }).port })}\n`);
});
process.on('SIGTERM', () => {
  server.close();
  void nc.drain().then(() => process.exit(0));
});
