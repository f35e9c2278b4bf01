/**
 * Screens are addressed by the URL fragment (`/#/issues?site=…&status=open`): a deep link survives a reload, and
 * no dashboard path can shadow an API route on the same origin (the short-form API owns `/issues`, `/alerts`…).
 */
import { signal } from '@preact/signals';

export interface Route {
  /** Path segments after `#/`, e.g. ['issue', '<id>']. */
  parts: string[];
  query: URLSearchParams;
}

function parse(): Route {
  const h = location.hash.replace(/^#\/?/, '');
  const [p, q] = h.split('?', 2);
  return { parts: (p ?? '').split('/').filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(q ?? '') };
}

export const route = signal<Route>(parse());
addEventListener('hashchange', () => {
  route.value = parse();
});

export function href(path: string, query: Record<string, string | undefined | null> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v) q.set(k, v);
  const s = q.toString();
  return `#/${path}${s ? `?${s}` : ''}`;
}

export function go(path: string, query: Record<string, string | undefined | null> = {}): void {
  location.hash = href(path, query);
}
