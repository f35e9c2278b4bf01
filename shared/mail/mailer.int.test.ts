import test from 'ava';
import { startSmtpSink } from '../testing/smtp-sink.ts';
import { createMailer } from './mailer.ts';

test('a message reaches a real SMTP server with its sender, recipient, subject and bodies', async (t) => {
  const sink = await startSmtpSink();
  const mailer = createMailer({ smtpUrl: sink.url, from: 'Friction <friction@test.example>' });
  try {
    await mailer.send({
      to: 'someone@test.example',
      subject: 'Hello',
      text: 'plain body with a long token inv_0123456789abcdefghijklmnopqrstuvwxyz0123456789',
      html: '<p>html</p>',
    });
    const m = await sink.waitFor((x) => x.subject === 'Hello');
    t.deepEqual(m.to, ['someone@test.example']);
    t.is(m.raw.from?.value[0].address, 'friction@test.example');
    t.true(m.text.includes('inv_0123456789abcdefghijklmnopqrstuvwxyz0123456789'));
    t.true(String(m.raw.html).includes('<p>html</p>'));
  } finally {
    mailer.close();
    await sink.close();
  }
});

test('an unreachable SMTP server rejects the send (the caller decides what that means), within the timeout', async (t) => {
  const mailer = createMailer({ smtpUrl: 'smtp://127.0.0.1:1', from: 'f@test.example', timeoutMs: 2000 });
  await t.throwsAsync(mailer.send({ to: 'a@test.example', subject: 's', text: 't' }));
  mailer.close();
});
