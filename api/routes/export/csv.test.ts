import test from 'ava';
import fc from 'fast-check';
import { csvCell, csvRecord, neutraliseFormulas } from './csv.ts';

test('RFC 4180: quotes, commas and line breaks are quoted, quotes doubled; records end in CRLF', (t) => {
  t.is(
    csvRecord(['a', 'b,c', 'say "hi"', 'two\nlines', 'cr\r', null, 3, 0.25]),
    'a,"b,c","say ""hi""","two\nlines","cr\r",,3,0.25\r\n',
  );
});

test('formula injection: text starting with = + - @ tab or CR is neutralised; numbers are not', (t) => {
  t.is(csvCell('=HYPERLINK("http://evil")'), `"'=HYPERLINK(""http://evil"")"`);
  t.is(csvCell('+1+2'), "'+1+2");
  t.is(csvCell('-2+3'), "'-2+3");
  t.is(csvCell('@SUM(A1)'), "'@SUM(A1)");
  t.is(csvCell('\t=1'), `"'\t'=1"`);
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
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += c;
  }
  return rows;
}

test('property: any text round-trips through an RFC 4180 parser (formula starts keep a leading quote)', (t) => {
  fc.assert(
    fc.property(
      fc.array(fc.array(fc.string({ unit: 'binary' }), { minLength: 1, maxLength: 6 }), {
        minLength: 1,
        maxLength: 10,
      }),
      (rows) => {
        const back = parse(rows.map(csvRecord).join(''));
        return JSON.stringify(back) === JSON.stringify(rows.map((r) => r.map(neutraliseFormulas)));
      },
    ),
  );
  t.pass();
});

test('N4: a formula after ; , tab or a line break is neutralised, and a field holding ; or tab is quoted', (t) => {
  t.is(csvCell("x;=cmd|' /C calc'!A0"), `"x;'=cmd|' /C calc'!A0"`);
  t.is(csvCell('x,=1'), `"x,'=1"`);
  t.is(csvCell('x\t+1'), `"x\t'+1"`);
  t.is(csvCell('x; "@SUM(A1)"'), `"x; ""'@SUM(A1)"""`);
  t.is(csvCell(' =1'), "' =1");
  t.is(csvCell('a-b; c'), '"a-b; c"');
});

/**
 * Property over generated labels: however a spreadsheet splits the written field (on `,` `;` tab CR or LF, even
 * ignoring quotes), no piece begins a formula once the spaces, tabs and quotes it may skip are skipped.
 */
test('property: no piece of a written label, split on any separator, starts a formula', (t) => {
  const unit = fc.constantFrom('=', '+', '-', '@', ',', ';', '\t', '\r', '\n', '"', ' ', "'", 'x', 'cmd', '|');
  fc.assert(
    fc.property(fc.string({ unit, maxLength: 40 }), (label) => {
      const written = csvCell(label);
      return written.split(/[,;\t\r\n]/).every((piece) => !/^[=+\-@]/.test(piece.replace(/^[ \t\r"]*/, '')));
    }),
    { numRuns: 5000 },
  );
  t.pass();
});
