import test from 'ava';
import { ByteLru } from './byte-lru.ts';

const lru = (max: number) => new ByteLru<string>(max, (v) => v.length);

test('ByteLru keeps its values within the byte bound, dropping the least recently used first', (t) => {
  const c = lru(10);
  c.set('a', 'aaa');
  c.set('b', 'bbb');
  c.set('c', 'ccc');
  t.is(c.bytes, 9);
  t.is(c.get('a'), 'aaa'); // now the most recently used: b goes first
  c.set('d', 'dd');
  t.is(c.bytes, 8);
  t.is(c.get('b'), undefined);
  t.deepEqual(
    ['a', 'c', 'd'].map((k) => c.get(k)),
    ['aaa', 'ccc', 'dd'],
  );
  // A larger value drops as many as it needs.
  c.set('e', 'eeeeeeee');
  t.is(c.bytes, 10);
  t.is(c.size, 2);
  t.is(c.get('a'), undefined);
  t.is(c.get('c'), undefined);
  t.is(c.get('d'), 'dd');
});

test('ByteLru replaces a key in place and stores nothing larger than its bound', (t) => {
  const c = lru(10);
  c.set('a', 'aaaa');
  c.set('a', 'aaaaaa');
  t.is(c.bytes, 6);
  t.is(c.size, 1);
  c.set('big', 'x'.repeat(11));
  t.is(c.get('big'), undefined);
  t.is(c.get('a'), 'aaaaaa');
  // Replacing a key by a value too large drops the key's old value.
  c.set('a', 'y'.repeat(11));
  t.is(c.get('a'), undefined);
  t.is(c.bytes, 0);
  c.delete('missing');
  t.is(c.size, 0);
  t.throws(() => lru(Number.NaN));
});

test('ByteLru never holds more than its bound over random use', (t) => {
  const c = lru(100);
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < 5000; i++) {
    const key = `k${Math.floor(rand() * 40)}`;
    if (rand() < 0.6) c.set(key, 'v'.repeat(Math.floor(rand() * 40)));
    else c.get(key);
    t.true(c.bytes <= 100 && c.bytes >= 0);
  }
});
