import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import fc from 'fast-check';
import { classifyAddress, mayConnect, type AddressClass } from './address-class.ts';
import { checkOutboundUrl, OutboundRefusedError, outboundRequest } from './outbound.ts';

const STRICT = { allowPrivateNetworks: false };
const SELF_HOSTED = { allowPrivateNetworks: true };

test('addresses are classified, IPv6 forms that embed an IPv4 by the IPv4 they reach', (t) => {
  const cases: [string, AddressClass][] = [
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['172.32.0.1', 'public'],
    ['8.8.8.8', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['169.254.1.1', 'link_local'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['fd12:3456::1', 'unique_local'],
    ['fc00::1', 'unique_local'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:0808:0808::', 'public'],
    ['not-an-ip', 'invalid'],
    ['1.2.3', 'invalid'],
  ];
  for (const [a, cls] of cases) t.is(classifyAddress(a), cls, a);
});

test('policy: public always; loopback and private only when allowed; metadata, link-local, multicast never', (t) => {
  t.true(mayConnect('public', false));
  for (const c of ['loopback', 'private', 'unique_local'] as const) {
    t.false(mayConnect(c, false));
    t.true(mayConnect(c, true));
  }
  for (const c of ['metadata', 'link_local', 'multicast', 'unspecified', 'reserved', 'invalid'] as const) {
    t.false(mayConnect(c, false));
    t.false(mayConnect(c, true));
  }
});

test('property: an IPv4 address and its IPv4-mapped IPv6 forms classify the same', (t) => {
  fc.assert(
    fc.property(fc.ipV4(), (v4) => {
      const n = v4.split('.').map(Number);
      const hex = `${((n[0]! << 8) | n[1]!).toString(16)}:${((n[2]! << 8) | n[3]!).toString(16)}`;
      const cls = classifyAddress(v4);
      return (
        classifyAddress(`::ffff:${v4}`) === cls &&
        classifyAddress(`::ffff:${hex}`) === cls &&
        classifyAddress(`64:ff9b::${v4}`) === cls
      );
    }),
  );
  t.pass();
});

const refused = async (t: import('ava').ExecutionContext, url: string, policy = STRICT) => {
  const err = await t.throwsAsync(
    checkOutboundUrl(url, policy, async () => []),
    { instanceOf: OutboundRefusedError },
    url,
  );
  return err?.message ?? '';
};

test('create time: every odd spelling of loopback, private and metadata is refused; allowing private networks never admits metadata', async (t) => {
  // Refused by default, admitted when private networks are allowed (the message names the setting for loopback).
  const loopbacks = [
    'http://127.0.0.1/x',
    'http://0x7f000001/',
    'http://2130706433/',
    'http://127.1/',
    'http://0177.0.0.1/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:7f00:1]/',
    'http://localhost:8080/',
    'http://api.localhost/',
  ];
  const privates = [
    'http://10.0.0.1/',
    'http://192.168.0.1/',
    'http://172.16.5.4/',
    'http://[fd12::1]/',
    'http://0xa000001/',
  ];
  for (const u of [...loopbacks, ...privates]) {
    const msg = await refused(t, u);
    if (loopbacks.includes(u)) t.regex(msg, /loopback.*OUTBOUND_ALLOW_PRIVATE_NETWORKS/, u);
    await t.notThrowsAsync(
      checkOutboundUrl(u, SELF_HOSTED, async () => []),
      u,
    );
  }
  for (const u of [
    'http://169.254.169.254/latest/meta-data/',
    'http://0xa9fea9fe/',
    'http://2852039166/',
    'http://[fd00:ec2::254]/',
    'http://[::ffff:169.254.169.254]/',
    'http://169.254.1.1/',
    'http://[fe80::1]/',
    'http://224.0.0.1/',
    'http://0.0.0.0/',
  ]) {
    await refused(t, u);
    const msg = await refused(t, u, SELF_HOSTED);
    t.notRegex(msg, /unless/, `${u}: no setting admits it`);
  }
  for (const u of ['ftp://example.com/', 'file:///etc/passwd', 'gopher://x/', 'not a url'])
    await refused(t, u, SELF_HOSTED);
});

test('create time: a name resolving to a refused address is refused; an unresolvable one is left to delivery time', async (t) => {
  const err = await t.throwsAsync(
    checkOutboundUrl('https://rebind.example/', STRICT, async () => ['93.184.216.34', '127.0.0.1']),
  );
  t.regex(err!.message, /loopback/);
  await t.notThrowsAsync(
    checkOutboundUrl('https://nxdomain.example/', STRICT, async () => {
      throw new Error('ENOTFOUND');
    }),
  );
  await t.notThrowsAsync(checkOutboundUrl('https://ok.example/', STRICT, async () => ['93.184.216.34']));
});

async function listen(
  handler: (req: IncomingMessage, body: string) => [number, Record<string, string>?, string?] | 'hang',
): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const r = handler(req, body);
      if (r === 'hang') return;
      res.writeHead(r[0], r[1]);
      res.end(r[2] ?? '');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}

test('delivery: the connection goes to the address checked at resolve time, whatever the name is', async (t) => {
  const seen: string[] = [];
  const { server, port } = await listen((req, body) => (seen.push(`${req.headers.host} ${body}`), [200, {}, 'ok']));
  t.teardown(() => server.close());
  let lookups = 0;
  const res = await outboundRequest(
    { url: `http://hooks.example.test:${port}/in`, body: 'hi' },
    SELF_HOSTED,
    async () => (lookups++, ['127.0.0.1']),
  );
  t.is(res.status, 200);
  t.is(res.body.toString(), 'ok');
  t.is(lookups, 1, 'resolved once');
  t.deepEqual(seen, [`hooks.example.test:${port} hi`]);
  // The same name resolving to loopback without the setting: refused before any connection.
  const err = await t.throwsAsync(
    outboundRequest({ url: `http://hooks.example.test:${port}/in` }, STRICT, async () => ['127.0.0.1']),
  );
  t.is((err as { kind?: string }).kind, 'refused');
  const meta = await t.throwsAsync(
    outboundRequest({ url: 'http://meta.example.test/' }, SELF_HOSTED, async () => ['169.254.169.254']),
  );
  t.is((meta as { kind?: string }).kind, 'refused');
  t.is(seen.length, 1);
});

test('delivery: a URL sent to again is resolved and checked again (only its parse is reused)', async (t) => {
  const seen: string[] = [];
  const { server, port } = await listen((req) => (seen.push(req.url ?? ''), [204, {}]));
  t.teardown(() => server.close());
  const url = `http://again.example.test:${port}/in`;
  let lookups = 0;
  for (let i = 0; i < 3; i++)
    t.is((await outboundRequest({ url }, SELF_HOSTED, async () => (lookups++, ['127.0.0.1']))).status, 204);
  t.is(lookups, 3, 'one resolution per request');
  // The name now answers a metadata address: refused, though the URL was sent to a moment ago.
  t.is(
    ((await t.throwsAsync(outboundRequest({ url }, SELF_HOSTED, async () => ['169.254.169.254']))) as { kind?: string })
      .kind,
    'refused',
  );
  // A literal address allowed under one policy is refused under a stricter one (the class is kept, not the verdict).
  const literal = `http://127.0.0.1:${port}/lit`;
  t.is((await outboundRequest({ url: literal }, SELF_HOSTED)).status, 204);
  const err = await t.throwsAsync(outboundRequest({ url: literal }, STRICT));
  t.is((err as { kind?: string }).kind, 'refused');
  t.regex(err?.message ?? '', /loopback/);
  t.deepEqual(seen, ['/in', '/in', '/in', '/lit']);
});

test('delivery: redirects are answers, never followed; a silent server times out', async (t) => {
  const { server, port } = await listen((req) =>
    req.url === '/hang' ? 'hang' : [302, { location: 'http://169.254.169.254/' }],
  );
  t.teardown(() => server.close());
  const res = await outboundRequest({ url: `http://127.0.0.1:${port}/` }, SELF_HOSTED);
  t.is(res.status, 302);
  const started = Date.now();
  const err = await t.throwsAsync(
    outboundRequest({ url: `http://127.0.0.1:${port}/hang`, timeoutMs: 300 }, SELF_HOSTED),
  );
  t.is((err as { kind?: string }).kind, 'timeout');
  t.true(Date.now() - started < 5000);
});

test('delivery: the deadline covers DNS resolution: a 15 s resolver with a 1 s deadline rejects in about 1 s', async (t) => {
  const { server, port } = await listen(() => [204, {}]);
  t.teardown(() => server.close());
  const slowResolver = () =>
    new Promise<string[]>((resolve) => setTimeout(() => resolve(['127.0.0.1']), 15_000).unref());
  const started = Date.now();
  const err = await t.throwsAsync(
    outboundRequest({ url: `http://slow-dns.example.test:${port}/in`, timeoutMs: 1000 }, SELF_HOSTED, slowResolver),
  );
  const ms = Date.now() - started;
  t.is((err as { kind?: string }).kind, 'timeout');
  t.regex(err!.message, /resolving slow-dns\.example\.test/);
  t.true(ms >= 950 && ms < 5000, `${ms} ms`);
});

test('delivery: a server that answers its headers and then stalls the body times out too', async (t) => {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-length': '100' });
    res.write('partial');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => (server.closeAllConnections(), server.close()));
  const err = await t.throwsAsync(
    outboundRequest(
      { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, timeoutMs: 300 },
      SELF_HOSTED,
    ),
  );
  t.is((err as { kind?: string }).kind, 'timeout');
});

test('delivery: a huge answer is cut at the cap', async (t) => {
  const { server, port } = await listen(() => [200, {}, 'x'.repeat(200_000)]);
  t.teardown(() => server.close());
  const res = await outboundRequest({ url: `http://127.0.0.1:${port}/`, maxResponseBytes: 1000 }, SELF_HOSTED);
  t.is(res.body.length, 1000);
});
