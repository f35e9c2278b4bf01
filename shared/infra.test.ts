import test from 'ava';
import { describeDatabaseError } from './infra.ts';

// The errors a trust-authenticated test server cannot produce (a wrong password): the error objects node-postgres
// gives, described in words. The others are produced for real by ops/e2e/wrong-start.int.test.ts.
test('database errors are described in words, naming the user, database and server', (t) => {
  const url = 'postgres://friction:secret@db.internal:6432/analytics';
  t.is(
    describeDatabaseError({ code: '28P01', message: 'password authentication failed for user "friction"' }, url),
    'password authentication failed for user "friction": fix the URL\'s password',
  );
  t.regex(describeDatabaseError({ code: '3D000' }, url), /^database "analytics" does not exist on db\.internal:6432/);
  t.regex(
    describeDatabaseError({ code: '28000', message: 'role "friction" does not exist' }, url),
    /^role "friction" does not exist/,
  );
  t.regex(
    describeDatabaseError({ code: '28000', message: 'no pg_hba.conf entry for host' }, url),
    /refused user "friction" \(pg_hba\.conf/,
  );
  t.regex(
    describeDatabaseError({ errors: [{ code: 'ECONNREFUSED' }] }, url),
    /^connection refused by db\.internal:6432/,
  );
  t.false(describeDatabaseError({ code: '28P01' }, url).includes('secret'));
});
