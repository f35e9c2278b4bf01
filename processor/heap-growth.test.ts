import test from 'ava';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
const module = new URL('./heap-growth.ts', import.meta.url).href;

/**
 * A child sets its limit as the processor role does, once running, then keeps a state and runs full collections;
 * V8's own trace (`--trace-gc-verbose`) prints the growth factor each collection computed its next limit with. The
 * memory this saves is the engine bench's to measure (docs/benchmarks.md, "Processor memory").
 */
const child = `
import { limitHeapGrowth } from '${module}';
limitHeapGrowth(Number(process.env.PERCENT));
const state = [];
for (let i = 0; i < 300_000; i++) state.push({ id: 's' + i, hours: [i, i + 1] });
globalThis.gc();
globalThis.gc();
process.stdout.write(String(state.length));
`;

async function factors(percent: number): Promise<number[]> {
  const { stdout } = await run(
    process.execPath,
    ['--expose-gc', '--trace-gc-verbose', '--input-type=module', '-e', child],
    {
      env: { ...process.env, PERCENT: String(percent) },
      maxBuffer: 64 * 2 ** 20,
    },
  );
  return [...stdout.matchAll(/\[HeapController\] factor ([\d.]+)/g)].map((m) => Number(m[1]));
}

test('the processor limit on heap growth is what V8 grows the heap by after every full collection', async (t) => {
  const limited = await factors(50);
  t.true(limited.length >= 2, 'the full collections were traced');
  t.deepEqual([...new Set(limited)], [1.5]);
  // 0 leaves V8's own factor, computed from its collector's and the program's speeds (up to 4 on this machine).
  const own = await factors(0);
  t.true(own.length >= 2);
  t.true(
    own.some((f) => f !== 1.5),
    `V8's own factors: ${own.join(', ')}`,
  );
});
