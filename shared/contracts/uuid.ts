import { z } from 'zod';

/**
 * Any 8-4-4-4-12 hex id, as PostgreSQL's uuid type takes it, normalized to lower case. zod's `Uuid()` also
 * demands RFC 9562 version and variant digits, which would answer 400 to ids like
 * `11111111-1111-1111-1111-111111111111` that the database stores fine (and should answer 404 when unknown);
 * lower-casing makes an upper-case spelling of one's own site id the same id.
 */
export const Uuid = () => z.guid({ error: 'Invalid UUID' }).toLowerCase();
