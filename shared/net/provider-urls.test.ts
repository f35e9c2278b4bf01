import test from 'ava';
import { slackWebhookPath, slackWebhookTarget } from './provider-urls.ts';

test('a Slack target is rebuilt on the configured origin from a checked path; host confusion is refused', (t) => {
  t.is(
    slackWebhookTarget('https://hooks.slack.com/services/T1/B2/abc', 'http://127.0.0.1:9999'),
    'http://127.0.0.1:9999/services/T1/B2/abc',
  );
  for (const bad of [
    'https://hooks.slack.com//attacker.example/x',
    'https://hooks.slack.com/\\\\attacker.example/x',
    'https://hooks.slack.com/%2F%2Fa.example/x',
    'https://a@hooks.slack.com/services/T/B/X',
    'https://hooks.slack.com:443/services/T/B/X',
    'https://hooks.slack.com/services/T/B/X#x',
    'https:hooks.slack.com/services/T/B/X',
    'https://hooks.slack.com./services/T/B/X',
    'https://hooks.slack.com/services/T/B/X/../../..//evil',
    'https://hooks.slack.com/',
    'not a url',
  ]) {
    t.is(slackWebhookPath(bad), null, bad);
    t.is(slackWebhookTarget(bad, 'https://hooks.slack.com'), null, bad);
  }
  // The reported case: the old `new URL(path, base)` sent it to the attacker's host.
  t.is(new URL('//attacker.example/x', 'https://hooks.slack.com').host, 'attacker.example');
});
