/** Test-only: a small HTTP client for the API, keeping the raw body text (cross-tenant answers are compared byte for byte). */
export interface ApiResponse {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export function apiClient(baseUrl: string) {
  return async function call(
    method: Method,
    path: string,
    o: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse> {
    const headers: Record<string, string> = { ...o.headers };
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    if (o.body !== undefined) headers['content-type'] ??= 'application/json';
    const res = await fetch(`${baseUrl}${path}`, {
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
  };
}
export type ApiCall = ReturnType<typeof apiClient>;
