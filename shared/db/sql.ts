import { sql, type Expression, type RawBuilder } from 'kysely';

/**
 * Typed SQL fragments kysely's builder has no word for, shared by the query and store modules so that a query can
 * stay in the builder (kysely's reusable-helpers recipe: `Expression<T>` in, typed `RawBuilder<T>` out).
 */

/** A count as int4: count() is int8, which the drivers return as a string. */
export const intCount = (count: Expression<unknown>): RawBuilder<number> => sql<number>`(${count})::int`;

/** A timestamp as epoch ms (float8, a number in both drivers); `epochMs<null>` where it may be null (min of no rows). */
export const epochMs = <N extends null = never>(ts: Expression<Date | null>): RawBuilder<number | N> =>
  sql<number | N>`(extract(epoch from ${ts}) * 1000)::float8`;

/**
 * A time as the ISO text `Date.toISOString` writes (UTC, the microseconds cut to milliseconds as both drivers' Date
 * cuts them): a JSON document the database builds carries it ready to answer, with nothing to parse on this side.
 */
export const isoMs = <N extends null = never>(ts: Expression<Date | null>): RawBuilder<string | N> =>
  sql<string | N>`to_char(${ts} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** A date column as its YYYY-MM-DD text (the drivers would answer a Date at some time zone's midnight). */
export const isoDay = (column: string): RawBuilder<string> => sql<string>`to_char(${sql.ref(column)}, 'YYYY-MM-DD')`;

/** The database's clock `ms` from now (the server's time, so processes with skewed clocks agree). */
export const nowPlusMs = (ms: number): RawBuilder<Date> => sql<Date>`now() + make_interval(secs => ${ms / 1000})`;

/** The database's clock now. */
export const now = (): RawBuilder<Date> => sql<Date>`now()`;

/**
 * `jsonb_array_elements(…) as r`: rows sent as one jsonb document of positional arrays, read back as `r->>0`,
 * `r->1`… by the statement that embeds it (once or more: the document is encoded here, once). One native
 * JSON.stringify on this side and one parse on the server cost the processor's hot upserts far less CPU than a
 * parameter array per column, each built and escaped field by field; times travel as epoch ms (exact to the ms).
 */
export const jsonbRows = (rows: readonly (readonly unknown[])[]): RawBuilder<unknown> =>
  sql`jsonb_array_elements(${JSON.stringify(rows)}::jsonb) as r`;

/**
 * A `real` column rounded to one decimal exactly as a presenter's `Math.round(v * 10) / 10` rounds the number the
 * driver reads (float4's shortest text, read as a double), as float8: the same IEEE products and quotients, halves
 * rounded up as Math.round rounds them (x - floor(x) is exact), and -0 made 0 (JSON.stringify writes -0 as 0; float8's
 * text would be `-0`). Its JSON text (row_to_json, to_json) is float8's shortest, which is JavaScript's for the
 * one-decimal values between 1e-4 and 1e15 it can be.
 */
export const round1Real = (v: Expression<number>): RawBuilder<number> => {
  const x = sql`((${v})::text::float8 * 10)`;
  return sql<number>`((case when ${x} - floor(${x}) >= 0.5 then floor(${x}) + 1 else floor(${x}) end) / 10 + 0)`;
};
