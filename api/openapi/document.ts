import { z } from 'zod';
import type { RouteDoc } from './route-doc.ts';

/** `:param` (Koa) → `{param}` (OpenAPI). */
export const openApiPath = (koaPath: string): string => koaPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

type JsonSchema = Record<string, unknown>;

/**
 * Named components: a zod schema given `.meta({ id: 'PageScore' })` becomes `#/components/schemas/PageScore`,
 * referenced wherever it is used, so generated clients get one named type per resource. Collected while the
 * document is built.
 */
let components: Record<string, JsonSchema> = {};

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  // `unrepresentable: any`: a transform's output has no JSON Schema; it is described as any value, not dropped.
  const raw = JSON.stringify(z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }));
  const {
    $schema: _drop,
    $defs,
    ...rest
  } = JSON.parse(raw.replaceAll('"#/$defs/', '"#/components/schemas/')) as JsonSchema & {
    $defs?: Record<string, JsonSchema>;
  };
  for (const [id, def] of Object.entries($defs ?? {})) {
    const known = components[id];
    if (known && JSON.stringify(known) !== JSON.stringify(def))
      throw new Error(
        `two different schemas named ${id} in the OpenAPI document (input and output differ? name them apart)`,
      );
    components[id] = def;
  }
  return rest;
}

/** One OpenAPI parameter per property of an object schema. */
function parameters(schema: z.ZodType | undefined, where: 'path' | 'query'): JsonSchema[] {
  if (!schema) return [];
  const s = jsonSchema(schema, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(s.properties ?? {}).map(([name, p]) => ({
    name,
    in: where,
    required: where === 'path' || (s.required ?? []).includes(name),
    schema: p,
    ...(typeof p.description === 'string' ? { description: p.description } : {}),
  }));
}

const envelope = (data: JsonSchema): JsonSchema => ({
  type: 'object',
  required: ['data', 'error'],
  properties: { data, error: { type: 'null' } },
});

const ERRORS: Record<string, string> = {
  '400': 'invalid_input: details name each bad field',
  '401': 'unauthorized: missing, malformed, unknown, revoked or expired credential',
  '403': 'forbidden: the credential lacks the scope, or the user the role',
  '404': "not_found: missing, or another tenant's (the same answer)",
  '409': 'conflict: refused state change or duplicate',
  '413': 'payload_too_large',
  '415': 'unsupported_media_type: writes need application/json',
  '429': 'rate_limited (Retry-After) or quota_exceeded (plan limit)',
  '503': 'unavailable: a dependency is down (Retry-After)',
};

function operation(doc: RouteDoc): JsonSchema {
  const status = String(doc.status ?? 200);
  const success = doc.contentType
    ? { description: 'success', content: { [doc.contentType]: { schema: { type: 'string' } } } }
    : {
        description: 'success',
        content: { 'application/json': { schema: envelope(doc.response ? jsonSchema(doc.response, 'output') : {}) } },
      };
  const errors =
    doc.auth.kind === 'public' && !doc.body && !doc.query ? [] : ['400', '401', '403', '404', '409', '429', '503'];
  if (doc.body) errors.push('413', '415');
  const responses: Record<string, unknown> = { [status]: success };
  for (const code of errors.sort()) responses[code] = { $ref: `#/components/responses/E${code}` };
  const op: JsonSchema = {
    operationId: `${doc.method}${doc.path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    tags: [doc.tag],
    summary: doc.summary,
    parameters: [...parameters(doc.params, 'path'), ...parameters(doc.query, 'query')],
    responses,
  };
  if (doc.description) op.description = doc.description;
  if (doc.body)
    op.requestBody = { required: true, content: { 'application/json': { schema: jsonSchema(doc.body, 'input') } } };
  if (doc.auth.kind === 'public') op.security = [];
  else {
    op.security = [{ bearer: [] }];
    op['x-friction-auth'] =
      doc.auth.kind === 'publishable'
        ? { keys: ['publishable'], scopes: ['ingest:write'], roles: [] }
        : { scopes: doc.auth.scopes, roles: doc.auth.roles, user_token: doc.auth.roles.length > 0 };
  }
  return op;
}

/** The OpenAPI 3.1 document of every route in `docs`. */
export function openApiDocument(docs: readonly RouteDoc[], opts: { serverUrl?: string } = {}): JsonSchema {
  components = {};
  const paths: Record<string, Record<string, unknown>> = {};
  for (const doc of [...docs].sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method))) {
    const p = (paths[openApiPath(doc.path)] ??= {});
    if (p[doc.method]) throw new Error(`two descriptions of ${doc.method.toUpperCase()} ${doc.path}`);
    p[doc.method] = operation(doc);
  }
  const errorSchema = {
    type: 'object',
    required: ['data', 'error'],
    properties: {
      data: { type: 'null' },
      error: {
        type: 'object',
        required: ['code', 'message', 'status'],
        properties: {
          code: { type: 'string' },
          message: { type: 'string' },
          status: { type: 'integer' },
          details: {
            oneOf: [
              {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['path', 'message'],
                  properties: { path: { type: 'string' }, message: { type: 'string' } },
                },
              },
              { type: 'object' },
            ],
          },
        },
      },
    },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Friction API',
      version: '1.0.0',
      description:
        'UX friction analytics. Every response is the envelope `{data, error}`. Authentication: `Authorization: Bearer <API key or user JWT>`. Every answer carries `X-Request-Id`.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: opts.serverUrl ?? 'http://localhost:8080', description: 'this Friction (PUBLIC_BASE_URL)' }],
    // Every route needs the bearer unless it says otherwise (public routes carry `security: []`): a docs UI opens
    // with the bearer selected, ready for a key.
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API key (svc_pub_, svc_sec_, svc_mcp_) or a user JWT from /v1/auth/login',
        },
      },
      schemas: {
        Error: errorSchema,
        ...Object.fromEntries(Object.entries(components).sort(([a], [b]) => a.localeCompare(b))),
      },
      responses: Object.fromEntries(
        Object.entries(ERRORS).map(([code, description]) => [
          `E${code}`,
          { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
        ]),
      ),
    },
  };
}
