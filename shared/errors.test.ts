import test from 'ava';
import {
  failureCause,
  ForbiddenError,
  MethodNotAllowedError,
  NotFoundError,
  toAppError,
  UnauthorizedError,
} from './errors.ts';

test('an outage of a backing service (database connection lost, refused socket) is 503 unavailable with Retry-After, not a 500', (t) => {
  for (const err of [
    Object.assign(new Error('terminating connection'), { code: '57P01' }),
    Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }),
  ]) {
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

test('a unique violation (a duplicate write racing another) is 409 conflict, also when wrapped; the constraint is not named', (t) => {
  const pg = Object.assign(new Error('duplicate key value violates unique constraint "invitations_pending_idx"'), {
    code: '23505',
  });
  for (const err of [pg, new Error('wrapped', { cause: pg })]) {
    const e = toAppError(err);
    t.is(e.status, 409);
    t.is(e.code, 'conflict');
    t.false(e.message.includes('invitations_pending_idx'));
  }
  t.is(
    toAppError(Object.assign(new Error('fk'), { code: '23503' })).status,
    500,
    'other integrity errors are not conflicts',
  );
});

test('failureCause: schema, permission and lock faults are the environment; outages unavailable; data errors content', (t) => {
  const pg = (code: string) => Object.assign(new Error(code), { code });
  for (const code of ['42703', '42P01', '42883', '42501', '55P03', '25006', '28P01', '3D000'])
    t.is(failureCause(pg(code)), 'environment', code);
  t.is(failureCause(new Error('wrapped', { cause: pg('42703') })), 'environment', 'also as a cause');
  for (const code of ['08006', '40001', '40P01', '57014', '57P01', 'ECONNREFUSED'])
    t.is(failureCause(pg(code)), 'unavailable', code);
  for (const code of ['22021', '23502', '23514', 'P0001']) t.is(failureCause(pg(code)), 'content', code);
  t.is(failureCause(new TypeError('x is undefined')), 'content');
});

test('an exposed HTTP error from the framework keeps its status as our error class, code and message', (t) => {
  const cases = [
    [401, 'unauthorized', UnauthorizedError],
    [403, 'forbidden', ForbiddenError],
    [404, 'not_found', NotFoundError],
    [405, 'method_not_allowed', MethodNotAllowedError],
  ] as const;
  for (const [status, code, cls] of cases) {
    const e = toAppError({ status, expose: true, message: `said ${status}` });
    t.like(e, { status, code, message: `said ${status}` });
    t.true(e instanceof cls, `${status} is a ${cls.name}`);
  }
  t.like(toAppError({ status: 404, expose: true }), { code: 'not_found', message: 'not found' }, 'default message');
  t.like(toAppError({ status: 418, expose: true, message: 'teapot' }), { status: 400, code: 'invalid_input' });
});
