/**
 * Test-only, run as its own process (its own file-descriptor budget, apart from the server's): opens COUNT TCP
 * connections to HOST:PORT from LOCAL (another loopback address than the test's own requests), never sends a
 * byte, holds every one the server keeps, and prints one JSON line `{attempted, open, refused}` once all are
 * settled and the server has stopped closing any. It stays until its stdin closes. At most 512 connects are in flight at once (the listen queue).
 */
import { connect, type Socket } from 'node:net';

const [host, port, local, count] = [
  process.env.HOST ?? '127.0.0.1',
  Number(process.env.PORT),
  process.env.LOCAL ?? '127.0.0.2',
  Number(process.env.COUNT ?? 20_000),
];
const held = new Set<Socket>();
let attempted = 0;
let refused = 0;
let settled = 0;

function one(): Promise<void> {
  attempted++;
  return new Promise((resolve) => {
    const s = connect({ host, port, localAddress: local });
    let done = false;
    const settle = () => {
      if (!done) (done = true), settled++, resolve();
    };
    s.on('connect', () => {
      held.add(s);
      // A connection the server closes on arrival shows as an end/close within a moment; one it keeps stays.
      setTimeout(settle, 50);
    });
    s.on('error', () => {});
    s.on('close', () => {
      if (held.delete(s) || !done) refused++;
      settle();
    });
  });
}

async function main(): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      await one();
    }
  };
  await Promise.all(Array.from({ length: 512 }, worker));
  // A busy server closes the refused ones late (its accept loop shares the core, and a short flood can meet it still
  // starting): count once the closing settled, no socket lost for two whole seconds.
  for (let last = -1; held.size !== last; ) {
    last = held.size;
    await new Promise((r) => setTimeout(r, 2000));
  }
  process.stdout.write(`${JSON.stringify({ attempted, open: held.size, refused, settled })}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
}
void main();
