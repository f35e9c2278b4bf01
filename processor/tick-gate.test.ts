import test from 'ava';
import { TickGate } from './tick-gate.ts';

const tick = () => new Promise((r) => setImmediate(r));

test('batches share the gate; the tick waits for in-flight batches, and batches that arrive after it wait for the tick', async (t) => {
  const gate = new TickGate();
  const log: string[] = [];
  let releaseA!: () => void;
  const a = gate.shared(async () => {
    log.push('a start');
    await new Promise<void>((r) => (releaseA = r));
    log.push('a end');
  });
  const b = gate.shared(async () => void log.push('b ran'));
  await tick();
  const k = gate.exclusive(async () => {
    log.push('tick start');
    await tick();
    log.push('tick end');
  });
  const c = gate.shared(async () => void log.push('c ran'));
  await tick();
  t.deepEqual(log, ['a start', 'b ran'], 'the tick and the later batch wait for batch a');
  releaseA();
  await Promise.all([a, b, k, c]);
  t.deepEqual(log, ['a start', 'b ran', 'a end', 'tick start', 'tick end', 'c ran']);
});

test('a failing holder releases the gate', async (t) => {
  const gate = new TickGate();
  await t.throwsAsync(
    gate.exclusive(async () => {
      throw new Error('tick failed');
    }),
  );
  t.is(await gate.shared(async () => 1), 1);
});
