import type { ColumnType } from 'kysely';

// Column types shared by the table files. Timestamps are timestamptz (UTC); `day` columns are dates.

export type Timestamp = ColumnType<Date, Date | string, Date | string>;
/** A timestamp with a database default: optional on insert. */
export type GeneratedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
/** A nullable timestamp, null until set: optional on insert. */
export type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
export type Json = ColumnType<
  Record<string, unknown>,
  string | Record<string, unknown>,
  string | Record<string, unknown>
>;
