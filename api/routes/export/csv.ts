/**
 * RFC 4180 CSV (pure): fields separated by commas, records ended by CRLF, a field quoted (inner quotes doubled) when
 * it holds a comma, a quote, CR or LF, and also a semicolon or tab (spreadsheets in many locales split on those), so
 * such a spreadsheet still reads one cell. Text a spreadsheet would run as a formula is neutralised with a `'`
 * (OWASP's advice) wherever a cell could begin: at the start of the field (`=`, `+`, `-`, `@`, a tab or CR some
 * spreadsheets skip, or spaces and quotes before a formula character) and after every separator a spreadsheet may
 * split on (`,` `;` tab CR LF, then any spaces, tabs or quotes). So `x;=cmd|' /C calc'!A0` is written
 * `"x;'=cmd|' /C calc'!A0"`. Numbers are written as they are.
 */
export type CsvCell = string | number | boolean | null | undefined;

const NEEDS_QUOTES = /[",;\t\r\n]/;
const FORMULA_AFTER_SEPARATOR = /([,;\t\r\n][ \t\r"]*)(?=[=+\-@])/g;
const FORMULA_AT_START = /^(?:[=+\-@\t\r]|[ "]+[=+\-@])/;

/** The text with a `'` before every formula a spreadsheet could find in it (see above). */
export function neutraliseFormulas(v: string): string {
  const inner = v.replace(FORMULA_AFTER_SEPARATOR, "$1'");
  return FORMULA_AT_START.test(inner) ? `'${inner}` : inner;
}

export function csvCell(v: CsvCell): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  const text = neutraliseFormulas(v);
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvRecord(cells: readonly CsvCell[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}
