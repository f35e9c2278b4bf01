import test from 'ava';
import fc from 'fast-check';
import { csvCell, csvRecord } from './csv.ts';

test('RFC 4180: quotes, commas and line breaks are quoted, quotes doubled; records end in CRLF', (t) => {
  t.is(csvRecord(['a', 'b,c', 'say "hi"', 'two\nlines', 'cr\r', null, 3, 0.25]), 'a,"b,c","say ""hi""","two\nlines","cr\r",,3,0.25\r\n');
});

test('formula injection: text starting with = + - @ tab or CR is neutralised; numbers are not', (t) => {
  t.is(csvCell('=HYPERLINK("http://evil")'), `"'=HYPERLINK(""http://evil"")"`);
  t.is(csvCell('+1+2'), "'+1+2");
  t.is(csvCell('-2+3'), "'-2+3");
  t.is(csvCell('@SUM(A1)'), "'@SUM(A1)");
  t.is(csvCell('\t=1'), "'\t=1");
  t.is(csvCell('a=b'), 'a=b');
  t.is(csvCell(-1), '-1');
});

/** A small RFC 4180 parser: the round trip proves the writer's quoting. */
function parse(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { cell += '"'; i++; }
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(cell); cell = ''; }
    else if (c === '\r' && text[i + 1] === '\n') { row.push(cell); rows.push(row); row = []; cell = ''; i++; }
    else cell += c;
  }
  return rows;
}

test('property: any text round-trips through an RFC 4180 parser (formula starts keep a leading quote)', (t) => {
  fc.assert(
    fc.property(fc.array(fc.array(fc.string({ unit: 'binary' }), { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 10 }), (rows) => {
      const back = parse(rows.map(csvRecord).join(''));
      return JSON.stringify(back) === JSON.stringify(rows.map((r) => r.map((v) => (/^[=+\-@\t\r]/.test(v) ? `'${v}` : v))));
    }),
  );
  t.pass();
});
