import test from 'ava';
import { ConfigError, loadConfig, ownedPartitions } from './config.ts';

test('unset or empty service URLs select the embedded defaults', (t) => {
  const c = loadConfig({ DATABASE_URL: '', NATS_URL: undefined });
  t.is(c.DATABASE_URL, undefined);
  t.is(c.NATS_URL, undefined);
  t.is(c.REDIS_URL, undefined);
  t.is(c.PORT, 8080);
  t.is(c.FRICTION_DATA_DIR, './.friction');
});

test('invalid settings are all reported at once', (t) => {
  const err = t.throws(() => loadConfig({ PORT: 'eighty', DATABASE_URL: 'not a url', LOG_LEVEL: 'loud' }), {
    instanceOf: ConfigError,
  });
  t.is(err?.problems.length, 3);
  t.regex(err!.message, /PORT/);
  t.regex(err!.message, /DATABASE_URL/);
});

test('processor partitions: all, lists and ranges, bounded by EVENT_PARTITIONS', (t) => {
  t.deepEqual(ownedPartitions('all', 4), [0, 1, 2, 3]);
  t.deepEqual(ownedPartitions('auto', 4), [0, 1, 2, 3]); // without a lease bucket (embedded): its single process owns all
  t.deepEqual(ownedPartitions('2, 0', 4), [0, 2]);
  t.deepEqual(ownedPartitions('1-3', 8), [1, 2, 3]);
  t.throws(() => ownedPartitions('4', 4), { instanceOf: ConfigError });
  t.throws(() => ownedPartitions('3-1', 4), { instanceOf: ConfigError });
});
