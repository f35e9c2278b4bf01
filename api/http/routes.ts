import Router from '@koa/router';
import type Koa from 'koa';
import { z } from 'zod';
import { InternalError, NotFoundError } from '../../shared/errors.ts';
import { readJsonBody } from '../../shared/http/body.ts';
import { JsonText, ok, okEncoded, parseInput } from '../../shared/http/envelope.ts';
import { EncodedJson } from '../../shared/http/conditional-get.ts';
import type { HttpMethod, RouteDoc } from '../openapi/route-doc.ts';
import {
  READ_ACCESS,
  requireOrg,
  requireRole,
  requireSite,
  type AccessRule,
  type AuthState,
  type Principal,
} from './auth.ts';
import { Uuid } from '../../shared/contracts/uuid.ts';
import { SiteQuerySchema } from './common.schema.ts';

/** Largest write body. The spec sets none; management bodies are small, so anything larger is a mistake or abuse. */
export const MANAGE_BODY_LIMIT_BYTES = 64 * 1024;

export type Infer<S> = S extends z.ZodType ? z.infer<S> : undefined;

/**
 * Tenancy then role for the route's target (steps 3-4 of AccessRule). Every authenticated route must call
 * one of these before it answers: the route table fails the request (500) when a handler forgets, so a
 * missing check shows up in the first test instead of as a cross-tenant leak.
 */
export interface Guard {
  /** The object's site; undefined (object not found) answers 404 with the same message as a foreign one. */
  site(siteId: string | null | undefined, notFound: string): void;
  org(orgId: string | null | undefined, notFound: string): void;
}

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  principal: Principal;
  guard: Guard;
}

export interface RouteSpec<
  P extends z.ZodObject | undefined,
  Q extends z.ZodType | undefined,
  B extends z.ZodType | undefined,
> {
  method: Exclude<HttpMethod, 'put'>;
  path: string;
  tag: string;
  summary: string;
  description?: string;
  access: AccessRule;
  params?: P;
  /**
   * Answer for a malformed path id: the same 404 as a missing object, so ids cannot be probed by shape. A read
   * route also answers it when its handler finds nothing.
   */
  notFound?: string;
  query?: Q;
  body?: B;
  response?: z.ZodType;
  status?: number;
  /**
   * The query's `site_id` is the route's tenancy (read routes): checked right after the query is parsed, before
   * the path id, so a foreign site answers 404 'site not found' whatever else the request holds.
   */
  siteQuery?: boolean;
  /**
   * The body's `site_id` is the route's tenancy (a route that creates an object in a site): checked once the body is
   * parsed, before the handler runs, with the same 404 'site not found' as a foreign site in a query.
   */
  siteBody?: boolean;
  /**
   * The spec's short form of the same route (`/v1/issues` beside `/v1/query/issues`; POST `/v1/alerts/:id` beside
   * PATCH `/v1/manage/alerts/:id`): same handler, own summary, the route's method unless it names one.
   */
  shortForm?: { path: string; summary: string; description?: string; method?: Exclude<HttpMethod, 'put'> };
  /** Content type of a body the handler writes itself (a CSV stream, a PNG): not wrapped in the envelope. */
  contentType?: string;
  handler(ctx: Koa.Context, input: RouteInput<Infer<P>, Infer<Q>, Infer<B>>): Promise<unknown>;
}

/** What `RouteTable.read` is given: a RouteSpec less what every read route has the same. */
type ReadSpec<P extends z.ZodObject | undefined, Q extends z.ZodType<{ site_id: string }>> = Omit<
  RouteSpec<P, Q, undefined>,
  'method' | 'access' | 'siteQuery' | 'siteBody' | 'body' | 'shortForm' | 'query'
> & {
  query?: Q;
  access?: AccessRule;
  shortForm?: string | { summary: string; description?: string };
};

/**
 * A router whose every route carries its description: `add` registers the handler (auth, validation,
 * envelope) and records the RouteDoc the OpenAPI document is generated from.
 */
export class RouteTable {
  readonly router = new Router();
  readonly docs: RouteDoc[] = [];
  private readonly auth: (rule: AccessRule) => Koa.Middleware;

  constructor(auth: (rule: AccessRule) => Koa.Middleware) {
    this.auth = auth;
  }

  add<
    P extends z.ZodObject | undefined = undefined,
    Q extends z.ZodType | undefined = undefined,
    B extends z.ZodType | undefined = undefined,
  >(spec: RouteSpec<P, Q, B>): this {
    return this.register(
      spec,
      { kind: 'access', scopes: spec.access.scopes, roles: spec.access.roles },
      [this.auth(spec.access)],
      spec.access,
    );
  }

  /**
   * A read route: GET, the query's `site_id` as its tenancy; any role or a key that may read (READ_ACCESS) unless
   * `access` names another rule (a management read, the guide surface). Its short form, when it has one, is the
   * same path without `/query` (`/v1/query/issues` → `/v1/issues`). With `notFound`, a handler that finds nothing
   * (answers undefined) is answered 404 with that message, the same as a malformed path id. A route whose query is
   * only the site names no `query`: it is SiteQuerySchema, since a read route always has the site as its tenancy.
   */
  read<
    P extends z.ZodObject | undefined = undefined,
    Q extends z.ZodType<{ site_id: string }> = typeof SiteQuerySchema,
  >(spec: ReadSpec<P, Q>): this {
    const { shortForm, handler } = spec;
    return this.add({
      ...spec,
      method: 'get',
      query: spec.query ?? (SiteQuerySchema as z.ZodType as Q),
      access: spec.access ?? READ_ACCESS,
      siteQuery: true,
      shortForm:
        shortForm === undefined
          ? undefined
          : {
              path: spec.path.replace(/^\/v1\/query\//, '/v1/'),
              ...(typeof shortForm === 'string' ? { summary: shortForm } : shortForm),
            },
      async handler(ctx, input) {
        const data = await handler(ctx, input);
        if (data === undefined && spec.notFound !== undefined) throw new NotFoundError(spec.notFound);
        return data;
      },
    });
  }

  /**
   * A read route for one object of the site, by the uuid its path ends in (`/v1/query/alerts/:alert_id`): `find`
   * looks the object up in the query's site and `present` answers it; a malformed id, or one `find` does not find
   * (undefined), answers 404 with `notFound`.
   */
  readOne<K extends string, R, Q extends z.ZodType<{ site_id: string }> = typeof SiteQuerySchema>(
    spec: Omit<ReadSpec<undefined, Q>, 'params' | 'notFound' | 'handler'> & {
      path: `${string}/:${K}`;
      notFound: string;
      find(query: z.infer<Q>, id: string): Promise<R | undefined>;
      present(found: R): unknown;
    },
  ): this {
    const { find, present, ...rest } = spec;
    const name = spec.path.slice(spec.path.lastIndexOf(':') + 1) as K;
    return this.read({
      ...rest,
      params: idParam(name),
      async handler(_ctx, { query, params }) {
        const found = await find(query as z.infer<Q>, (params as Record<K, string>)[name]);
        return found === undefined ? undefined : present(found);
      },
    });
  }

  /** A route anyone may call (signup, login): `before` holds its own protection, such as a per-IP limit. */
  addPublic<
    P extends z.ZodObject | undefined = undefined,
    Q extends z.ZodType | undefined = undefined,
    B extends z.ZodType | undefined = undefined,
  >(spec: Omit<RouteSpec<P, Q, B>, 'access'>, before: Koa.Middleware[]): this {
    return this.register(spec, { kind: 'public' }, before, null);
  }

  private register<P extends z.ZodObject | undefined, Q extends z.ZodType | undefined, B extends z.ZodType | undefined>(
    spec: Omit<RouteSpec<P, Q, B>, 'access'>,
    auth: RouteDoc['auth'],
    before: Koa.Middleware[],
    access: AccessRule | null,
  ): this {
    const paths: { path: string; summary: string; description?: string; method?: Exclude<HttpMethod, 'put'> }[] = [
      { path: spec.path, summary: spec.summary, description: spec.description },
    ];
    if (spec.shortForm) paths.push(spec.shortForm);
    for (const p of paths)
      this.docs.push({
        method: p.method ?? spec.method,
        path: p.path,
        tag: spec.tag,
        summary: p.summary,
        description: p.description,
        auth,
        params: spec.params,
        query: spec.query,
        body: spec.body,
        response: spec.response,
        status: spec.status,
        contentType: spec.contentType,
      });
    const handle: Koa.Middleware = async (ctx) => {
      const principal = (ctx.state as Partial<AuthState>).principal as Principal;
      let guarded = access === null;
      const guard: Guard = {
        site(siteId, notFound) {
          if (!siteId) throw new NotFoundError(notFound);
          requireSite(principal, siteId, notFound);
          requireRole(principal, access?.roles ?? []);
          guarded = true;
        },
        org(orgId, notFound) {
          if (!orgId) throw new NotFoundError(notFound);
          requireOrg(principal, orgId, notFound);
          requireRole(principal, access?.roles ?? []);
          guarded = true;
        },
      };
      const parseParams = () => {
        if (!spec.params) return undefined;
        const r = spec.params.safeParse(ctx.params);
        if (!r.success) throw new NotFoundError(spec.notFound ?? 'not found');
        return r.data;
      };
      const parseQuery = () => (spec.query ? parseInput(spec.query, ctx.query, 'query') : undefined);
      let params: unknown;
      let query: unknown;
      if (spec.siteQuery) {
        query = parseQuery();
        guard.site((query as { site_id: string }).site_id, 'site not found');
        params = parseParams();
      } else {
        params = parseParams();
        query = parseQuery();
      }
      const body = spec.body
        ? parseInput(spec.body, await readJsonBody(ctx, MANAGE_BODY_LIMIT_BYTES), 'body')
        : undefined;
      if (spec.siteBody) guard.site((body as { site_id: string }).site_id, 'site not found');
      const data = await spec.handler(ctx, { params, query, body, principal, guard } as RouteInput<
        Infer<P>,
        Infer<Q>,
        Infer<B>
      >);
      if (!guarded)
        throw new InternalError(
          new Error(`${spec.method.toUpperCase()} ${spec.path} answered without a tenancy check`),
        );
      // A handler that writes its own body (CSV, PNG) has set it, with its status.
      if (spec.contentType) return;
      ctx.status = spec.status ?? 200;
      // A handler that encoded its whole answer (envelope included) itself, or whose data is JSON text the database
      // wrote: conditionalGet sends those bytes.
      ctx.body = data instanceof EncodedJson ? data : data instanceof JsonText ? okEncoded(data) : ok(data);
    };
    for (const p of paths) this.router[p.method ?? spec.method](p.path, ...before, handle);
    return this;
  }
}

/** Path parameter schemas: a uuid, or the route's 404. */
export const idParam = <K extends string>(name: K) =>
  z.object({ [name]: Uuid() } as Record<K, ReturnType<typeof Uuid>>);
