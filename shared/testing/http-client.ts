/**
 * Test-only: the one HTTP client of the tests. It keeps the raw body text beside the parsed JSON (cross-tenant
 * answers are compared byte for byte; a non-JSON answer leaves `body` undefined).
 */
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
