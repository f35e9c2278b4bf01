/**
 * Text PostgreSQL cannot store: the NUL character (refused in `text` and `jsonb`, also as the JSON escape
 * `\u0000` inside jsonb) and UTF-16 surrogates without their pair (not encodable as UTF-8).
 */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

/** True when `s` holds a NUL or a lone surrogate (see above). */
export function hasUnstorableText(s: string): boolean {
  return UNSTORABLE.test(s);
}

/** `s` with every NUL and lone surrogate replaced by U+FFFD, so it can always be stored (dead letters, logs). */
export function toStorableText(s: string): string {
  return UNSTORABLE.test(s) ? s.replace(UNSTORABLE_ALL, '\uFFFD') : s;
}
