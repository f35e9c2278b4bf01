import { computed, signal } from '@preact/signals';
import { get, setCsrfToken, signedOut } from './api.ts';
import { route } from './route.ts';

export interface Me {
  user: { id: string; email: string };
  org: { id: string; name: string; plan: string; trial_ends_at: string | null };
  role: string;
  session_expires_at: string;
  csrf_token: string | null;
}
export interface Site {
  id: string;
  name: string;
  url: string;
  status: string;
}

export const me = signal<Me | null>(null);
export const sites = signal<Site[]>([]);
/** False until the first session check has answered (or found no session to check). */
export const booted = signal(false);

const SITE_KEY = 'friction.site';
/** The site the screens show: the URL's `site`, else the last one chosen, else the first. */
export const siteId = computed<string | null>(() => {
  const fromUrl = route.value.query.get('site');
  const list = sites.value;
  if (fromUrl && list.some((s) => s.id === fromUrl)) return fromUrl;
  const saved = localStorage.getItem(SITE_KEY);
  if (saved && list.some((s) => s.id === saved)) return saved;
  return list[0]?.id ?? null;
});
export const rememberSite = (id: string): void => localStorage.setItem(SITE_KEY, id);

/** Set with the HttpOnly session cookie (api/http/browser-session.ts): without it no session can exist. */
const mayBeSignedIn = (): boolean => document.cookie.split(';').some((c) => c.trim() === 'friction_signed_in=1');

export async function loadSession(): Promise<void> {
  try {
    if (!mayBeSignedIn()) {
      me.value = null;
      return;
    }
    const m = await get<Me>('/v1/auth/session');
    setCsrfToken(m.csrf_token);
    const s = await get<{ sites: Site[] }>('/v1/manage/site', { org_id: m.org.id });
    sites.value = s.sites;
    me.value = m;
    signedOut.value = false;
  } catch {
    me.value = null;
  } finally {
    booted.value = true;
  }
}
