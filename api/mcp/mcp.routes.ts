import Router from '@koa/router';
import type Koa from 'koa';
import { ForbiddenError, MethodNotAllowedError, UnauthorizedError } from '../../shared/errors.ts';
import { readTextBody } from '../../shared/http/body.ts';
import type { AuthState } from '../http/auth.ts';
import type { McpDeps } from './server.ts';

/**
 * The MCP SDK, its JSON-schema and validation dependencies (about 150 modules) and the tools' schemas are loaded with
 * the first MCP request, not with the role: every api process and test stack would load them, and few ever serve MCP.
 */
let mcpModules: Promise<[typeof import('./sdk.ts'), typeof import('./server.ts')]> | undefined;
const loadMcp = () => (mcpModules ??= Promise.all([import('./sdk.ts'), import('./server.ts')]));

/** Largest JSON-RPC request body: tool arguments are ids, paths and small numbers. */
export const MCP_BODY_LIMIT_BYTES = 64 * 1024;

export interface McpRouteDeps extends McpDeps {
  /** Auth of the guide surface: MCP keys (mcp:read), secret keys (query:read) and user tokens; 200/min per site. */
  guideAuth: Koa.Middleware;
  /** Origins a browser-based MCP client may call from (the public base URL's and MCP_ALLOWED_ORIGINS). */
  allowedOrigins: ReadonlySet<string>;
}

/**
 * A browser page on another origin must not drive the server with a user's credentials or through DNS rebinding (MCP
 * "Security Warning"): a request carrying a foreign Origin is refused before anything else. Desktop assistants and
 * servers send no Origin and pass.
 */
function checkOrigin(allowed: ReadonlySet<string>): Koa.Middleware {
  return async (ctx, next) => {
    const origin = ctx.get('origin');
    if (origin && !allowed.has(origin))
      throw new ForbiddenError(
        `Origin ${origin} may not call the MCP server (allowed: the public base URL's origin and MCP_ALLOWED_ORIGINS)`,
      );
    await next();
  };
}

/** 401 answers name the scheme (RFC 6750, MCP authorization): clients then know to send a Bearer key. */
function challenge(auth: Koa.Middleware): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await auth(ctx, next);
    } catch (err) {
      if (err instanceof UnauthorizedError)
        ctx.set(
          'WWW-Authenticate',
          `Bearer realm="friction", error="invalid_token", error_description="send Authorization: Bearer <svc_mcp_ key with mcp:read, or secret key with query:read>"`,
        );
      throw err;
    }
  };
}

/**
 * `POST /v1/mcp`: MCP over Streamable HTTP, stateless with JSON responses. Each request gets its own server and transport
 * (no session survives it), built for the authenticated caller, so tools can only read what the caller may read.
 * GET (the server-to-client stream) and DELETE (session end) have nothing to serve here: 405.
 */
/** Origins allowed on /v1/mcp: PUBLIC_BASE_URL's (or the default local base URL's) and MCP_ALLOWED_ORIGINS. */
export function mcpAllowedOrigins(cfg: {
  PUBLIC_BASE_URL?: string;
  PORT: number;
  MCP_ALLOWED_ORIGINS: readonly string[];
}): Set<string> {
  const own = cfg.PUBLIC_BASE_URL
    ? [new URL(cfg.PUBLIC_BASE_URL).origin]
    : [`http://localhost:${cfg.PORT}`, `http://127.0.0.1:${cfg.PORT}`];
  return new Set([...own, ...cfg.MCP_ALLOWED_ORIGINS]);
}

export function mcpRouter(deps: McpRouteDeps): Router {
  const router = new Router();
  const before = [checkOrigin(deps.allowedOrigins), challenge(deps.guideAuth)];
  router.post('/v1/mcp', ...before, async (ctx) => {
    const principal = (ctx.state as AuthState).principal;
    const body = await readTextBody(ctx.req, MCP_BODY_LIMIT_BYTES);
    const headers = new Headers();
    for (const [k, v] of Object.entries(ctx.headers)) if (typeof v === 'string') headers.set(k, v);
    // The transport refuses (406) a client whose Accept lacks text/event-stream; this server only ever answers JSON,
    // so such a client (curl, a hand-written one) is served rather than refused.
    headers.set('accept', 'application/json, text/event-stream');
    const request = new Request(new URL(ctx.originalUrl, 'http://mcp.invalid'), { method: 'POST', headers, body });
    const requestId = String(ctx.state.requestId ?? '');
    // Audit rows of this request's tool calls are written while the answer is sent; a failure is logged, not answered.
    const afterAnswer = (p: Promise<void>) =>
      void p.catch((err: unknown) =>
        deps.log.error({ err, request_id: requestId }, 'MCP tool-call audit row not written'),
      );
    const [{ WebStandardStreamableHTTPServerTransport }, { buildMcpServer }] = await loadMcp();
    const server = buildMcpServer(deps, principal, requestId, afterAnswer);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    try {
      await server.connect(transport);
      const res = await transport.handleRequest(request);
      ctx.status = res.status;
      res.headers.forEach((value, name) => ctx.set(name, value));
      const text = await res.text();
      // Notifications only: 202 with no body (the envelope middleware must not call an empty 2xx a missing route).
      ctx.body = text === '' ? null : text;
      if (text === '') ctx.status = res.status;
    } finally {
      await transport.close();
      await server.close();
    }
  });
  const notAllowed: Koa.Middleware = async (ctx) => {
    ctx.set('Allow', 'POST');
    throw new MethodNotAllowedError(
      `${ctx.method} is not served on /v1/mcp: the server is stateless (no server-to-client stream, no session to end); send JSON-RPC with POST`,
    );
  };
  // No credential needed to learn that nothing is served (and no rate budget spent on it); a foreign Origin is still refused.
  router.get('/v1/mcp', checkOrigin(deps.allowedOrigins), notAllowed);
  router.delete('/v1/mcp', checkOrigin(deps.allowedOrigins), notAllowed);
  return router;
}
