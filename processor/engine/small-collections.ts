/**
 * The engine's bound between small and large forms. Most of its collections (a page's elements, a session index, a
 * cluster day's sessions, an hour's signal types) hold a few entries, and in V8 an empty Map already costs about 190
 * bytes against about 30 for a small array: at 100k pages that difference is tens of MiB. So each stays a flat,
 * exact-size array up to this many entries, scanned linearly (at this size as fast as hashing), and becomes a Map
 * past it, so that no scan grows with the data.
 */

/** Entries at which a flat array becomes a Map. */
export const SMALL_LIMIT = 16;
