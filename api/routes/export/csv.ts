/**
 * RFC 4180 CSV (pure): fields separated by commas, records ended by CRLF, a field quoted (inner quotes doubled) when
 * it holds a comma, a quote, CR or LF. Text that a spreadsheet would run as a formula (starting with `=`, `+`, `-`,
 * `@`, or a tab or CR that some spreadsheets skip before one) is neutralised with a leading `'` (OWASP's advice),
 * so opening an export never executes what a visitor's browser sent. Numbers are written as they are.
 */
export type CsvCell = string | number | boolean | null | undefined;

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

export function csvCell(v: CsvCell): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  const text = FORMULA_START.test(v) ? `'${v}` : v;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvRecord(cells: readonly CsvCell[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}
