import test from 'ava';
import { randomBytes } from 'node:crypto';
import { seal, unseal } from './secret-box.ts';

test('a sealed secret opens with its key only, and tampering is detected', (t) => {
  const key = randomBytes(32);
  const sealed = seal(key, 'whsec_abc');
  t.false(sealed.includes('whsec_abc'));
  t.not(seal(key, 'whsec_abc'), sealed, 'a fresh IV each time');
  t.is(unseal(key, sealed), 'whsec_abc');
  t.throws(() => unseal(randomBytes(32), sealed));
  const parts = sealed.split('.');
  parts[3] = Buffer.from('whsec_xyz').toString('base64url');
  t.throws(() => unseal(key, parts.join('.')));
});
