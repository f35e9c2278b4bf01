import test from 'ava';
import { toAppError } from './errors.ts';

test('an outage of a backing service (database connection lost, refused socket) is 503 unavailable with Retry-After, not a 500', (t) => {
  for (const err of [Object.assign(new Error('terminating connection'), { code: '57P01' }), Object.assign(new Error('connect'), { code: 'ECONNREFUSED' })]) {
    const e = toAppError(err);
    t.is(e.status, 503);
    t.is(e.code, 'unavailable');
    t.true((e.retryAfterSec ?? 0) > 0);
  }
});

test('anything else unknown stays a 500 server_error that does not leak its message', (t) => {
  const e = toAppError(new TypeError('x is undefined'));
  t.is(e.status, 500);
  t.is(e.code, 'server_error');
  t.is(e.message, 'internal server error');
});
