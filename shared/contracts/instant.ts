import { z } from 'zod';

/**
 * An ISO 8601 instant with an offset, within years 0001 to 9999 (UTC). Year 0000 (1 BC) parses in JavaScript and in
 * PostgreSQL, but the embedded database fails on it with a server error, and no analytics instant lies outside
 * these years: bounding it here makes every database answer the same 400.
 */
export const StorableInstant = () =>
  z.iso.datetime({ offset: true }).refine((v) => {
    const year = new Date(v).getUTCFullYear();
    return year >= 1 && year <= 9999;
  }, 'must be between years 0001 and 9999 (UTC)');
