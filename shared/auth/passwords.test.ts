import test from 'ava';
import { hashPassword, verifyPassword } from './passwords.ts';

test('a password verifies against its hash, another does not; each hash has its own salt', async (t) => {
  const a = await hashPassword('correct horse battery', 1024);
  const b = await hashPassword('correct horse battery', 1024);
  t.regex(a, /^scrypt\$1024\$8\$3\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/);
  t.not(a, b);
  t.true(await verifyPassword('correct horse battery', a));
  t.false(await verifyPassword('correct horse batterY', a));
});

test('the cost travels in the hash, so hashes of an older cost still verify; malformed hashes never do', async (t) => {
  const cheap = await hashPassword('pw-12345678', 1024);
  const dearer = await hashPassword('pw-12345678', 2048);
  t.true(await verifyPassword('pw-12345678', cheap));
  t.true(await verifyPassword('pw-12345678', dearer));
  for (const bad of ['', 'plain', 'scrypt$x$8$3$a$b', cheap.replace('scrypt', 'bcrypt')])
    t.false(await verifyPassword('pw-12345678', bad), bad);
});
