import { MAX_META_JSON_CHARS } from './constants.ts';
import type { Meta } from './types.ts';

const clip = (v: unknown): unknown => (typeof v === 'string' ? v.slice(0, 256) : v);
const plain = (v: unknown): boolean =>
  v === null || Number.isFinite(v) || typeof v === 'string' || typeof v === 'boolean';

/**
 * Props made safe for the contract: at most 32 keys of ≤ 64 chars with primitive values (strings
 * cut to 256); nested objects, arrays, functions and cycles are dropped, and the result must
 * serialize to ≤ 2048 chars or it is replaced by `{ truncated: true }`.
 */
export const cleanMeta = (m: unknown): Meta | undefined => {
  if (!m || typeof m !== 'object') return undefined;
  const out: Meta = {};
  for (const k of Object.keys(m).slice(0, 32)) {
    const v = (m as Meta)[k];
    if (plain(v)) out[k.slice(0, 64)] = clip(v);
  }
  return JSON.stringify(out).length <= MAX_META_JSON_CHARS ? out : { truncated: true };
};
