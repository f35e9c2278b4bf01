import type { WireContext } from './types.ts';

/**
 * The page an event belongs to: the path, plus the hash when the site routes by hash (`#/…`, `#!/…`).
 * Query strings are dropped on purpose: they carry tokens, emails and search terms.
 */
export function pagePath(): string {
  const h = location.hash;
  return ((location.pathname || '/') + (/^#!?\//.test(h) ? h : '')).slice(0, 2048);
}

function device(): WireContext['device'] {
  const coarse = typeof matchMedia === 'function' && matchMedia('(pointer: coarse)').matches;
  if (!coarse) return 'desktop';
  return innerWidth < 768 ? 'mobile' : innerWidth < 1280 ? 'tablet' : 'desktop';
}

/** Landing facts, read once per document: the referrer without its query, and utm_source. */
export function landing(): { referrer?: string; source?: string } {
  const out: { referrer?: string; source?: string } = {};
  if (document.referrer) out.referrer = document.referrer.split(/[?#]/)[0].slice(0, 2048);
  const src = new URLSearchParams(location.search).get('utm_source');
  if (src) out.source = src.slice(0, 128);
  return out;
}

/** The batch context, computed at send time so the viewport is current. */
export function batchContext(base: Omit<WireContext, 'device' | 'viewport'>): WireContext {
  return {
    ...base,
    device: device(),
    viewport: { w: Math.max(0, Math.round(innerWidth)), h: Math.max(0, Math.round(innerHeight)) },
  };
}
