import test from 'ava';
import { MemoryBus } from './bus/memory-bus.ts';
import { announceHint, listenForHints } from './cache-hints.ts';

test('a JSON object announced reaches every listener on the subject; malformed hints and other subjects change nothing', async (t) => {
  const bus = new MemoryBus();
  const seen: Record<string, unknown>[][] = [[], []];
  const stops = seen.map((into) => listenForHints(bus, 'hint.a', (h) => into.push(h)));
  await announceHint(bus, 'hint.a', { site_id: 's1' });
  await announceHint(bus, 'hint.b', { site_id: 's2' });
  await bus.broadcast('hint.a', new TextEncoder().encode('{not json'));
  await bus.broadcast('hint.a', new TextEncoder().encode('"a string"'));
  await bus.broadcast('hint.a', new TextEncoder().encode('null'));
  t.deepEqual(seen, [[{ site_id: 's1' }], [{ site_id: 's1' }]]);
  stops[0]!();
  await announceHint(bus, 'hint.a', { hashes: ['h'] });
  t.deepEqual(seen[0], [{ site_id: 's1' }], 'unsubscribed');
  t.deepEqual(seen[1], [{ site_id: 's1' }, { hashes: ['h'] }]);
});

test('a failed broadcast is not an error: the cache TTL is the fallback', async (t) => {
  const bus = {
    broadcast: async () => {
      throw new Error('bus down');
    },
    listen: () => () => {},
  };
  await t.notThrowsAsync(announceHint(bus, 'hint.a', { site_id: 's1' }));
});
