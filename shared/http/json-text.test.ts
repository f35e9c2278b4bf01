import test from 'ava';
import { JsonText, serializeJson } from './json-text.ts';

test('serializeJson writes each JsonText as its text, wherever it is and however often', (t) => {
  const pages = new JsonText('[{"page":"/","score":1.5},{"page":"/a\\"b","score":null}]');
  const value = { data: { pages, n: 1, site: { pages, list: [pages, 'x'] } }, error: null };
  t.is(
    serializeJson(value),
    `{"data":{"pages":${pages.text},"n":1,"site":{"pages":${pages.text},"list":[${pages.text},"x"]}},"error":null}`,
  );
  t.is(serializeJson(new JsonText('7')), '7');
});

test('serializeJson is JSON.stringify without a JsonText, and JSON.stringify reads a JsonText as its value', (t) => {
  const plain = { a: 'json-text-', b: ['"json-text-0"', 2], c: null, d: undefined };
  t.is(serializeJson(plain), JSON.stringify(plain));
  const text = new JsonText('{"x":[1,"y"]}');
  t.is(JSON.stringify({ text }), '{"text":{"x":[1,"y"]}}');
  // A string that looks like a mark is an answer's own string: it stays.
  t.is(serializeJson({ s: '"json-text-0"', text }), '{"s":"\\"json-text-0\\"","text":{"x":[1,"y"]}}');
});

test('a failed stringify leaves no JsonText state behind', (t) => {
  const cyclic: Record<string, unknown> = { text: new JsonText('1') };
  cyclic.self = cyclic;
  t.throws(() => serializeJson(cyclic));
  t.is(JSON.stringify({ text: new JsonText('[1]') }), '{"text":[1]}');
});
