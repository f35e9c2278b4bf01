import test from 'ava';
import { clientAddress, trustedProxyList } from './client-address.ts';

test('without trusted proxies X-Forwarded-For is ignored: the peer is the client', (t) => {
  t.is(clientAddress('203.0.113.9', '1.2.3.4', null), '203.0.113.9');
  t.is(clientAddress('::ffff:203.0.113.9', undefined, null), '203.0.113.9');
});

test('a trusted proxy peer: the rightmost untrusted hop is the client; spoofed left entries are not believed', (t) => {
  const trusted = trustedProxyList('127.0.0.1, 10.0.0.0/8');
  t.is(clientAddress('127.0.0.1', '198.51.100.7', trusted), '198.51.100.7');
  t.is(clientAddress('127.0.0.1', '6.6.6.6, 198.51.100.7', trusted), '198.51.100.7', 'the client wrote 6.6.6.6 itself');
  t.is(clientAddress('127.0.0.1', '6.6.6.6, 198.51.100.7, 10.1.2.3', trusted), '198.51.100.7', 'two trusted hops');
  t.is(clientAddress('203.0.113.9', '198.51.100.7', trusted), '203.0.113.9', 'an untrusted peer cannot forward');
  t.is(clientAddress('127.0.0.1', 'garbage', trusted), '127.0.0.1');
  t.is(
    clientAddress('127.0.0.1', '10.0.0.5', trusted),
    '10.0.0.5',
    'all hops trusted: the leftmost is the best we know',
  );
});

test('malformed proxy lists are refused', (t) => {
  t.throws(() => trustedProxyList('10.0.0.0/33'));
  t.throws(() => trustedProxyList('example.com'));
  t.truthy(trustedProxyList('::1, fd00::/8'));
});
