import type { WireContext } from './types.ts';

/**
 * The page an event belongs to: the path, plus the hash when the site routes by hash (`#/…`, `#!/…`;
 * not an anchor like `#section-2`, nor the empty route `#/`). Query strings, the route's own included,
 * are dropped on purpose: they carry tokens, emails and search terms. Ingest applies the same rule.
 */
export const pagePath = (): string => {
  const h = location.hash.split('?')[0];
  return ((location.pathname || '/') + (/^#!?\/./.test(h) ? h : '')).slice(0, 2048);
};

/**
 * A touch (coarse) primary pointer makes a phone or a tablet, told apart by the screen's short
 * side: the viewport is no guide, since phones lay out non-responsive pages 980 px wide.
 */
const device = (): WireContext['device'] => {
  const s = matchMedia('(pointer: coarse)').matches ? Math.min(screen.width, screen.height) : 1e4;
  return s < 600 ? 'mobile' : s < 1100 ? 'tablet' : 'desktop';
};

/** Landing facts, read once per document: the referrer without its query, and utm_source. */
export function landing(): { referrer?: string; source?: string } {
  const out: { referrer?: string; source?: string } = {};
  if (document.referrer) out.referrer = document.referrer.split(/[?#]/)[0].slice(0, 2048);
  const src = new URLSearchParams(location.search).get('utm_source');
  if (src) out.source = src.slice(0, 128);
  return out;
}

/** The batch context, computed at send time so the viewport is current. */
export const batchContext = (base: Omit<WireContext, 'device' | 'viewport'>): WireContext => {
  return {
    ...base,
    device: device(),
    // innerWidth and innerHeight are integers (CSSOM View: long).
    viewport: { w: innerWidth, h: innerHeight },
  };
};
