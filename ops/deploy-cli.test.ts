import test from 'ava';
import { createServer, type Server } from 'node:http';
import { parseDuration, runDeployCommand, type CliIo } from './deploy-cli.ts';

/** A service stand-in on 127.0.0.1 answering one deploy whose verdict the test sets. */
async function fakeService(verdict: () => string): Promise<{ url: string; server: Server; calls: string[] }> {
  const calls: string[] = [];
  const server = createServer((req, res) => {
    calls.push(`${req.method} ${req.url}`);
    res.setHeader('content-type', 'application/json');
    if (req.headers.authorization !== 'Bearer svc_sec_test') {
      res.statusCode = 401;
      res.end(JSON.stringify({ data: null, error: { code: 'unauthorized', message: 'unknown key', status: 401 } }));
      return;
    }
    const d = {
      id: 'd1',
      version: '1.0',
      environment: 'production',
      confusion_before: 10,
      confusion_after: 12,
      delta: 2,
      verdict: verdict(),
      verdict_reasons: ['because'],
      related_issues: [],
    };
    res.end(JSON.stringify({ data: req.url?.startsWith('/v1/query/deploys?') ? { deploys: [d] } : d, error: null }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  return { url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`, server, calls };
}

function io(env: Record<string, string> = {}): CliIo & { outLines: string[]; errLines: string[] } {
  const outLines: string[] = [];
  const errLines: string[] = [];
  let clock = 0;
  return {
    outLines,
    errLines,
    env,
    fetch: (...a) => fetch(...a),
    out: (l) => outLines.push(l),
    err: (l) => errLines.push(l),
    // Time is the one thing faked: each wait moves the clock instead of sleeping.
    sleep: async (ms) => void (clock += ms),
    now: () => clock,
  };
}

test('durations', (t) => {
  t.is(parseDuration('90s'), 90_000);
  t.is(parseDuration('2h'), 7_200_000);
  t.is(parseDuration('1500'), 1500);
  t.throws(() => parseDuration('soon'));
});

test('usage errors exit 2 and name the problem', async (t) => {
  const cases: [string[], RegExp][] = [
    [[], /missing deploy command/],
    [['ship'], /unknown deploy command/],
    [['check', '--key', 'k', '--base-url', 'http://x'], /--site/],
    [['record', '--key', 'k'], /--base-url/],
    [['record', '--base-url', 'ftp://x', '--key', 'k', '--version', '1'], /http/],
    [['record', '--base-url', 'http://x', '--key', 'k'], /--version/],
    [
      ['record', '--base-url', 'http://x', '--key', 'k', '--version', '1', '--environment', 'qa'],
      /production or staging/,
    ],
    [['check', '--base-url', 'http://x', '--key', 'k', '--site', 's'], /exactly one/],
    [['check', '--bogus'], /bogus/],
    [
      ['check', '--base-url', 'http://x', '--key', 'k', '--site', 's', '--deploy', 'd', '--fail-on', 'never'],
      /fail-on/,
    ],
  ];
  for (const [args, message] of cases) {
    const o = io();
    t.is(await runDeployCommand(args, o), 2, args.join(' '));
    t.regex(o.errLines.join('\n'), message, args.join(' '));
  }
  const help = io();
  t.is(await runDeployCommand(['--help'], help), 0);
});

test('check: PASS 0, FAIL 1, WARN until the timeout 0 (1 with --fail-on warn), a refused key or no service 2', async (t) => {
  let verdict = 'WARN';
  const svc = await fakeService(() => verdict);
  try {
    const env = { FRICTION_BASE_URL: svc.url, FRICTION_SECRET_KEY: 'svc_sec_test', FRICTION_SITE_ID: 's1' };
    const warn = io(env);
    t.is(await runDeployCommand(['check', '--deploy', 'd1', '--timeout', '3m', '--interval', '1m'], warn), 0);
    t.is(warn.errLines.length, 3, 'one progress line per wait');
    t.regex(warn.outLines[0], /^WARN/);
    t.is(await runDeployCommand(['check', '--deploy', 'd1', '--timeout', '1m', '--fail-on', 'warn'], io(env)), 1);
    verdict = 'FAIL';
    const fail = io(env);
    t.is(await runDeployCommand(['check', '--version', '1.0'], fail), 1);
    t.deepEqual(fail.outLines.slice(0, 2), [
      'FAIL: deploy d1 version 1.0 (production), confusion 10 → 12 (delta 2)',
      '  - because',
    ]);
    verdict = 'PASS';
    t.is(await runDeployCommand(['check', '--deploy', 'd1'], io(env)), 0);
    t.is(await runDeployCommand(['check', '--version', 'nope'], io(env)), 2, 'unknown version');
    t.is(await runDeployCommand(['check', '--deploy', 'd1', '--key', 'svc_sec_wrong'], io(env)), 2);
    t.true(svc.calls.includes('GET /v1/query/deploys/d1?site_id=s1'));
  } finally {
    svc.server.close();
  }
  t.is(
    await runDeployCommand(
      ['check', '--deploy', 'd1'],
      io({ FRICTION_BASE_URL: 'http://127.0.0.1:1', FRICTION_SECRET_KEY: 'k', FRICTION_SITE_ID: 's' }),
    ),
    2,
  );
});
