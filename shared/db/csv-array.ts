import { sql, type RawBuilder } from 'kysely';

/**
 * A column of values that never contain a comma (uuids, numbers, ISO timestamps, enum words) as ONE text parameter
 * split by `string_to_array` into a typed array: node-postgres escapes an array parameter element by element, which
 * on the processor's per-fetch upserts (a thousand rows, a dozen columns) cost more CPU than building the rows.
 * An empty field is null, so values must not be empty strings.
 */
export function csvArray(
  values: readonly (string | number | null | undefined)[],
  type: 'uuid' | 'int' | 'real' | 'float8' | 'smallint' | 'timestamptz' | 'date' | 'text',
): RawBuilder<unknown> {
  let joined = '';
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (i > 0) joined += ',';
    if (v !== null && v !== undefined) joined += String(v);
  }
  return sql`string_to_array(${joined}, ',', '')::${sql.raw(type)}[]`;
}
