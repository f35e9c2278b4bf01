import test from 'ava';
import { mkdtemp, readFile, stat, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useTestDatabase } from '../testing/database.ts';
import { InstanceKeys } from './instance-keys.ts';
import { secretWeakness } from './instance-secret.ts';

const handle = useTestDatabase(test, 'secret');

const rows = async () => handle.db.selectFrom('instance_secrets').selectAll().execute();
const keysIn = (dir: string, secret?: string) =>
  new InstanceKeys(handle.db, { FRICTION_DATA_DIR: dir, FRICTION_SECRET: secret, DATABASE_URL: undefined });

test.serial(
  'without FRICTION_SECRET the secret is generated into the data directory with mode 0600, never into the database',
  async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'friction-secret-'));
    const [a, b] = await Promise.all([keysIn(dir), keysIn(dir)]);
    const [ka, kb] = await Promise.all([a.jwtKey(), b.jwtKey()]);
    t.deepEqual(ka, kb, 'two processes starting together agree on one secret');
    const st = await stat(join(dir, 'instance-secret'));
    t.is(st.mode & 0o777, 0o600);
    t.true((await readFile(join(dir, 'instance-secret'), 'utf8')).trim().length >= 32);
    t.deepEqual(await rows(), [], 'a database dump holds no secret');
    t.deepEqual(await keysIn(dir).jwtKey(), ka, 'a restart reads the same file');
    // A file someone loosened is tightened again, and said.
    await chmod(join(dir, 'instance-secret'), 0o644);
    const loaded = await keysIn(dir).load();
    t.is((await stat(join(dir, 'instance-secret'))).mode & 0o777, 0o600);
    t.true(loaded.warnings.some((w) => w.includes('0600')));
  },
);

test.serial(
  'a secret an older version kept in the database is moved into the file and deleted; tokens made under it stay valid',
  async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'friction-secret-'));
    const old = 'Q'.repeat(10) + 'x7Fk2pLm9RtY4wZs8vBn3cJh6dGqA1eU';
    await handle.db.insertInto('instance_secrets').values({ name: 'master', value: old }).execute();
    const keys = keysIn(dir);
    const s = await keys.load();
    t.is(s.source, 'moved-from-database');
    t.is((await readFile(join(dir, 'instance-secret'), 'utf8')).trim(), old);
    t.deepEqual(await rows(), []);
    t.deepEqual(
      await keys.jwtKey(),
      await keysIn(await mkdtemp(join(tmpdir(), 'friction-secret-')), old).jwtKey(),
      'same derived keys as before the move',
    );
  },
);

test.serial(
  'FRICTION_SECRET wins, a leftover database secret is deleted, and a weak one is warned about',
  async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'friction-secret-'));
    await handle.db
      .insertInto('instance_secrets')
      .values({ name: 'master', value: 'leftover-leftover-leftover-leftover' })
      .execute();
    const strong = 'a3f19c0e5b7d2468ace13579bdf02468ace13579bdf02468ace13579bdf0aa11';
    const s = await keysIn(dir, strong).load();
    t.is(s.source, 'env');
    t.deepEqual(await rows(), []);
    t.false(s.warnings.some((w) => w.includes('weak')));
    const weak = await keysIn(dir, 'changeme-changeme-changeme-changeme').load();
    t.true(weak.warnings.some((w) => w.includes('weak')));
  },
);

test('weakness: placeholders, few distinct characters and short low-entropy secrets', (t) => {
  t.truthy(secretWeakness('a'.repeat(64)));
  t.truthy(secretWeakness('changeme-please-changeme-please-changeme'));
  t.truthy(secretWeakness('abababababababababababababababab12'));
  t.is(secretWeakness('a3f19c0e5b7d2468ace13579bdf02468ace13579bdf02468ace13579bdf0aa11'), null);
  t.is(secretWeakness('Zr4_kP9-qW2xL7mN0vB5cT8yH3jD6gF1sA'), null);
});
