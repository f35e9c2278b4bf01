import type { z } from 'zod';

export type HttpMethod = 'get' | 'post' | 'patch' | 'delete' | 'put';

/** How a route authenticates, for the description (the middleware enforces it). */
export type RouteAuth =
  | { kind: 'public' }
  | { kind: 'publishable' }
  | { kind: 'access'; scopes: readonly string[]; roles: readonly string[] };

/**
 * One route as the OpenAPI description shows it. The schemas are the very zod schemas the route validates
 * with, so the description cannot drift from what the route accepts.
 */
export interface RouteDoc {
  method: HttpMethod;
  /** Koa path syntax: `/v1/manage/alerts/:alert_id`. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  auth: RouteAuth;
  params?: z.ZodObject;
  query?: z.ZodType;
  body?: z.ZodType;
  /** Schema of `data` in the success envelope, when it has a fixed shape. */
  response?: z.ZodType;
  /** Success status (200 unless said). */
  status?: number;
  /** Content type of the success body when it is not the JSON envelope. */
  contentType?: string;
}
