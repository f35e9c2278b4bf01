import test, { type ExecutionContext } from 'ava';
import http from 'node:http';
import net from 'node:net';
import { REFUSED_HEADER, startEgressProxy, type EgressProxy } from './egress-proxy.ts';

/** A local upstream for this test (closed when it ends): counts every TCP connection; /hop redirects to metadata; /fake claims to be a refusal. */
async function upstream(t: ExecutionContext): Promise<{
  port: number;
  connections: () => number;
  seen: http.IncomingHttpHeaders[];
}> {
  let connections = 0;
  const seen: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.headers);
    if (req.url === '/hop')
      return void res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
    if (req.url === '/fake')
      return void res.writeHead(403, { [REFUSED_HEADER]: 'refused', 'x-kept': 'yes' }).end('site');
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`path ${req.url}`);
  });
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return { port: (server.address() as net.AddressInfo).port, connections: () => connections, seen };
}

/** One plain-http request through the proxy (absolute URI in the request line). */
function viaProxy(
  proxy: EgressProxy,
  url: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: proxy.port, path: url, headers: { host: 'ignored.example' }, agent: false },
      (res) => {
        let body = '';
        res
          .setEncoding('utf8')
          .on('data', (c: string) => {
            body += c;
          })
          .on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject).end();
  });
}

/** A CONNECT through the proxy: the answer's status and headers, and the tunnel socket when it was opened. */
function connect(
  proxy: EgressProxy,
  hostPort: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; socket: net.Socket }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: proxy.port, method: 'CONNECT', path: hostPort, agent: false });
    req.on('connect', (res: http.IncomingMessage, socket: net.Socket) =>
      resolve({ status: res.statusCode ?? 0, headers: res.headers, socket }),
    );
    req.on('error', reject).end();
  });
}

/** An egress proxy for this test only (closed when it ends); `refused` collects the URLs it refused. */
async function proxyFor(t: ExecutionContext, allowPrivateNetworks: boolean) {
  const refused: string[] = [];
  const proxy = await startEgressProxy({
    policy: { allowPrivateNetworks },
    timeoutMs: 5000,
    onRefused: (url) => refused.push(url),
  });
  t.teardown(() => proxy.close());
  return { proxy, refused };
}

test('strict policy: a loopback URL is refused with the marker, over plain http and CONNECT, and never contacted', async (t) => {
  const up = await upstream(t);
  const { proxy, refused } = await proxyFor(t, false);
  const plain = await viaProxy(proxy, `http://127.0.0.1:${up.port}/a`);
  t.is(plain.status, 403);
  t.is(plain.headers[REFUSED_HEADER], 'refused');
  const tunnel = await connect(proxy, `localhost:${up.port}`);
  t.is(tunnel.status, 403);
  t.is(tunnel.headers[REFUSED_HEADER], 'refused');
  tunnel.socket.destroy();
  t.deepEqual(refused, [`http://127.0.0.1:${up.port}/a`, `https://localhost:${up.port}`]);
  t.is(up.connections(), 0);
});

test('metadata is refused even with private networks allowed (the guard refuses before any connection)', async (t) => {
  const { proxy, refused } = await proxyFor(t, true);
  t.is((await viaProxy(proxy, 'http://169.254.169.254/latest/meta-data/')).headers[REFUSED_HEADER], 'refused');
  const tunnel = await connect(proxy, '169.254.169.254:443');
  t.is(tunnel.status, 403);
  tunnel.socket.destroy();
  t.deepEqual(refused, ['http://169.254.169.254/latest/meta-data/', 'https://169.254.169.254']);
});

test('an allowed request is forwarded with its Host, a redirect comes back unfollowed, and a site cannot fake the marker', async (t) => {
  const up = await upstream(t);
  const { proxy } = await proxyFor(t, true);
  const ok = await viaProxy(proxy, `http://localhost:${up.port}/page?q=1`);
  t.is(ok.status, 200);
  t.is(ok.body, 'path /page?q=1');
  t.is(up.seen[0]!.host, `localhost:${up.port}`);
  t.is(up.seen[0]!.via, '1.1 friction-egress');
  const hop = await viaProxy(proxy, `http://127.0.0.1:${up.port}/hop`);
  t.is(hop.status, 302);
  t.is(hop.headers.location, 'http://169.254.169.254/latest/meta-data/');
  const fake = await viaProxy(proxy, `http://127.0.0.1:${up.port}/fake`);
  t.is(fake.status, 403);
  t.is(fake.headers[REFUSED_HEADER], undefined);
  t.is(fake.headers['x-kept'], 'yes');
  t.is(fake.body, 'site');
});

test('an allowed CONNECT is a two-way tunnel to the checked address', async (t) => {
  const echo = net.createServer((s) => s.pipe(s));
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => echo.close(() => r())));
  const port = (echo.address() as net.AddressInfo).port;
  const { proxy } = await proxyFor(t, true);
  const tunnel = await connect(proxy, `127.0.0.1:${port}`);
  t.is(tunnel.status, 200);
  const back = new Promise<string>((r) => tunnel.socket.once('data', (b: Buffer) => r(b.toString())));
  tunnel.socket.write('ping');
  t.is(await back, 'ping');
  tunnel.socket.destroy();
});

test('not a proxy request is 400; an upstream that cannot be reached is 502 without the marker', async (t) => {
  const closed = net.createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const deadPort = (closed.address() as net.AddressInfo).port;
  await new Promise((r) => closed.close(r)); // nothing listens there now
  const { proxy } = await proxyFor(t, true);
  t.is((await viaProxy(proxy, '/origin-form')).status, 400);
  const dead = await viaProxy(proxy, `http://127.0.0.1:${deadPort}/`);
  t.is(dead.status, 502);
  t.is(dead.headers[REFUSED_HEADER], undefined);
  const tunnel = await connect(proxy, `127.0.0.1:${deadPort}`);
  t.is(tunnel.status, 502);
  tunnel.socket.destroy();
});
