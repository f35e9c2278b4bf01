/**
 * The embedded bench's floor: a bare node:http handler that reads each batch, parses it, keeps it in memory (what
 * the in-process bus does with an accepted batch) and answers 202. No framework, validation, auth, limits or
 * storage. Run as a child process by `npm run bench -- embedded`; prints `{"port":…}` once listening.
 */
import http from 'node:http';

const kept: unknown[] = [];
const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    try {
      kept.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      // Bounded like a stream that is consumed: the floor must not grow its heap for the whole run.
      if (kept.length > 10_000) kept.length = 0;
      res
        .writeHead(202, { 'content-type': 'application/json' })
        .end('{"data":{"accepted":2,"duplicates":0},"error":null}');
    } catch {
      res.writeHead(400).end();
    }
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as { port: number }).port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
