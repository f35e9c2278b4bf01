/**
 * Test-only: the one HTTP client of the tests. It keeps the raw body text beside the parsed JSON (cross-tenant
 * answers are compared byte for byte; a non-JSON answer leaves `body` undefined).
 */
import type { ExecutionContext } from 'ava';

export interface ApiResponse {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RequestOptions {
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** JSON-encoded unless a string; `content-type: application/json` unless `headers` names one. */
  body?: unknown;
  headers?: Record<string, string>;
}

export async function request(method: Method, url: string, o: RequestOptions = {}): Promise<ApiResponse> {
  const headers: Record<string, string> = {
    ...(o.body === undefined ? {} : { 'content-type': 'application/json' }),
    ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
    ...o.headers,
  };
  const res = await fetch(url, {
    method,
    headers,
    body: o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body),
  });
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, body, text, headers: res.headers };
}

export const getJson = (url: string, headers: Record<string, string> = {}): Promise<ApiResponse> =>
  request('GET', url, { headers });

export const postJson = (url: string, body: unknown, headers: Record<string, string> = {}): Promise<ApiResponse> =>
  request('POST', url, { body, headers });

/** `call(method, path, options)` against one base URL (a stack's, read at each call: it starts in a before hook). */
export function apiClient(base: string | { baseUrl: string }) {
  return (method: Method, path: string, o: RequestOptions = {}): Promise<ApiResponse> =>
    request(method, `${typeof base === 'string' ? base : base.baseUrl}${path}`, o);
}
export type ApiCall = ReturnType<typeof apiClient>;

/** POSTs `body` with a user `token`; resolves to the answer's `data`, and throws, naming the answer, unless it is 201. */
export async function created(call: ApiCall, path: string, token: string, body: unknown): Promise<any> {
  const r = await call('POST', path, { token, body });
  if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${r.text}`);
  return r.body.data;
}

/** Each query of `cases` (answered by `get`) is refused with 400, the error's first detail naming the bad field. */
export async function assertRejected(
  t: ExecutionContext,
  get: (query: string) => Promise<ApiResponse>,
  cases: readonly (readonly [query: string, field: string])[],
): Promise<void> {
  for (const [query, field] of cases) {
    const r = await get(query);
    t.is(r.status, 400, query);
    t.is(r.body?.error?.details?.[0]?.path, field, query);
  }
}

/**
 * GETs `missing` (an id that exists nowhere) expecting 404, then each of `lookalikes` (another tenant's id, a malformed
 * one…) expecting the very same answer: a read must not tell "not yours" or "not an id" from "no such".
 */
export async function assertSameNotFound(
  t: ExecutionContext,
  headers: Record<string, string>,
  missing: string,
  lookalikes: readonly string[],
): Promise<void> {
  const none = await getJson(missing, headers);
  t.is(none.status, 404, missing);
  for (const url of lookalikes) t.deepEqual((await getJson(url, headers)).body, none.body, url);
}
