/**
 * The one module that imports `@modelcontextprotocol/sdk`: the server, its transport and the client side the tests
 * use. A major upgrade of the SDK changes this file (and what it re-exports), nothing else.
 */
export { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
export { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
export { Client } from '@modelcontextprotocol/sdk/client/index.js';
export { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
export { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
export { McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
export type { CallToolResult, GetPromptResult } from '@modelcontextprotocol/sdk/types.js';
