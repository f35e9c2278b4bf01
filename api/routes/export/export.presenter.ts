import { csvRecord, type CsvCell } from './csv.ts';
import { EXPORT_COLUMNS, type ExportRow } from './export.queries.ts';

/** The header record: the column names, in order. */
export const EXPORT_HEADER = csvRecord(EXPORT_COLUMNS);

/** Coordinates as the API serves them everywhere: fractions 0..1. */
const unit = (v: number | null): number | null => (v === null ? null : v / 1000);

/** One event as a CSV record: timestamps ISO 8601, meta as JSON text. */
export function presentExportRow(r: ExportRow): string {
  const cells: CsvCell[] = [
    r.id,
    r.ts.toISOString(),
    r.session_id,
    r.type,
    r.page,
    r.signal,
    r.name,
    r.selector,
    r.label,
    unit(r.x),
    unit(r.y),
    unit(r.vx),
    unit(r.vy),
    unit(r.px),
    unit(r.py),
    r.value,
    r.device,
    r.source,
    r.app_version,
    r.environment,
    r.meta === null ? null : JSON.stringify(r.meta),
  ];
  return csvRecord(cells);
}
