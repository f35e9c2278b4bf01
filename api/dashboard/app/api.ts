/**
 * The dashboard's only way to the server: the public API, same origin, authenticated by the HttpOnly session
 * cookie (the browser sends it; scripts never see it). Unsafe methods carry the session's CSRF token, which
 * GET /v1/auth/session hands out. Answers are unwrapped from the envelope; failures become ApiError.
 */
import { signal } from '@preact/signals';

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;
  constructor(status: number, code: string, message: string, details?: unknown) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

let csrfToken: string | null = null;
export const setCsrfToken = (t: string | null): void => {
  csrfToken = t;
};

/** Set when any request answers 401: the shell shows the sign-in screen. */
export const signedOut = signal(false);

type Query = Record<string, string | number | boolean | undefined | null>;

export function url(path: string, query: Query = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/** GETs revalidate what the browser kept (ETag, 304): a poll that finds nothing new moves no body. */
export async function api<T>(method: string, path: string, o: { query?: Query; body?: unknown } = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  const res = await fetch(url(path, o.query), {
    method,
    headers,
    body: o.body === undefined ? undefined : JSON.stringify(o.body),
    credentials: 'same-origin',
    cache: method === 'GET' ? 'no-cache' : 'no-store',
  });
  const text = await res.text();
  let parsed: { data?: T; error?: { code: string; message: string; details?: unknown } } | null = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    throw new ApiError(res.status, 'bad_answer', `the server answered ${res.status} without JSON`);
  }
  if (!res.ok || !parsed || parsed.error) {
    const e = parsed?.error;
    if (res.status === 401 && !path.startsWith('/v1/auth/login')) signedOut.value = true;
    throw new ApiError(res.status, e?.code ?? 'error', e?.message ?? `request failed (${res.status})`, e?.details);
  }
  return parsed.data as T;
}

export const get = <T>(path: string, query?: Query) => api<T>('GET', path, { query });
export const post = <T>(path: string, body?: unknown, query?: Query) =>
  api<T>('POST', path, { body: body ?? {}, query });
export const patch = <T>(path: string, body: unknown) => api<T>('PATCH', path, { body });
export const del = <T>(path: string) => api<T>('DELETE', path);
