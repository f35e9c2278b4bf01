import Router from '@koa/router';
import { openApiDocument } from './document.ts';
import type { RouteDoc } from './route-doc.ts';

/** `GET /v1/openapi.json`: generated once, on first request, from the routes' own schemas. Public. */
export function openApiRouter(docs: () => readonly RouteDoc[]): Router {
  let body: string | undefined;
  const router = new Router();
  router.get('/v1/openapi.json', (ctx) => {
    body ??= JSON.stringify(openApiDocument(docs()));
    ctx.type = 'application/json';
    ctx.body = body;
  });
  return router;
}
