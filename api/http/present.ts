/**
 * Session ids as the spec shows them (`ses_` prefix). SDK session ids are opaque strings; the prefix is added
 * for display and stripped again where a session id is taken as input.
 */
export const presentSessionId = (id: string): string => (id.startsWith('ses_') ? id : `ses_${id}`);

/** A timestamp as every answer shows it (ISO 8601 UTC), null kept. Rows carry Date; raw SQL rows may carry strings. */
export const isoOrNull = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());
