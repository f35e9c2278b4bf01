import test from 'ava';
import { inSample, uuid } from './ids.ts';

test('uuid: RFC 4122 version 4, and unique', (t) => {
  const ids = Array.from({ length: 2000 }, uuid);
  for (const id of ids) t.regex(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  t.is(new Set(ids).size, ids.length);
});

test('sampling keeps about sampleRate of sessions, and always decides a session the same way', (t) => {
  const sessions = Array.from({ length: 20_000 }, uuid);
  for (const rate of [0.05, 0.3, 0.5, 0.9]) {
    const kept = sessions.filter((s) => inSample(s, rate)).length / sessions.length;
    t.true(Math.abs(kept - rate) < 0.015, `rate ${rate}: kept ${kept}`);
  }
  t.true(sessions.every((s) => inSample(s, 0.3) === inSample(s, 0.3)));
  t.true(sessions.every((s) => inSample(s, 1) && !inSample(s, 0)));
  t.true(
    sessions.every((s) => !inSample(s, 0.3) || inSample(s, 0.6)),
    'a session in a smaller sample is in every larger one',
  );
});
