import type { RouteDoc } from '../openapi/route-doc.ts';
import { READ_SCOPES, ALL_ROLES } from '../http/auth.ts';

const auth = { kind: 'access' as const, scopes: READ_SCOPES, roles: ALL_ROLES };

/** /v1/mcp in the OpenAPI document: JSON-RPC 2.0 (MCP), described in words; the MCP tools/list answer is its schema. */
export const mcpRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/v1/mcp',
    tag: 'mcp',
    auth,
    contentType: 'application/json',
    summary:
      'MCP server (Streamable HTTP, stateless, JSON responses): read-only tools and the post_deploy_check prompt',
    description:
      'Body: one JSON-RPC 2.0 message or a batch (MCP 2025-06-18 and later; Accept must list application/json and text/event-stream). ' +
      'Answers JSON-RPC, not the envelope: tool failures are results with isError true; a malformed message is a JSON-RPC error (400, code -32700). ' +
      "A request with an Origin header outside PUBLIC_BASE_URL's origin and MCP_ALLOWED_ORIGINS is refused (403). No key: 401 with WWW-Authenticate. " +
      'Counts on the guide surface (200 requests per minute per site). See docs/mcp.md.',
  },
  ...(['get', 'delete'] as const).map(
    (method): RouteDoc => ({
      method,
      path: '/v1/mcp',
      tag: 'mcp',
      auth: { kind: 'public' },
      status: 405,
      contentType: 'application/json',
      summary:
        method === 'get'
          ? 'Not served: the stateless server opens no server-to-client stream (405, Allow: POST)'
          : 'Not served: there is no session to end (405, Allow: POST)',
    }),
  ),
];
