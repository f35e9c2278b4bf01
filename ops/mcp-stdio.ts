/**
 * `friction mcp --url <base> --key <key>`: MCP over stdio for desktop assistants, bridged to the server's `POST /v1/mcp`,
 * so there is one implementation of the tools (the API role's) and this process holds no data and no configuration.
 * stdout carries nothing but protocol messages; everything said to a human goes to stderr.
 */
import { StdioServerTransport, StreamableHTTPClientTransport, type JSONRPCMessage } from '../api/mcp/sdk.ts';

export const MCP_USAGE = `friction mcp --url <base URL> --key <svc_mcp_… key>   (or env FRICTION_URL, FRICTION_KEY)

Serves MCP over stdio for a desktop assistant, forwarding every message to <base URL>/v1/mcp with the key.
Logs go to stderr; stdout carries only MCP messages.`;

export interface McpStdioOptions {
  url?: string;
  key?: string;
}

const isRequest = (m: JSONRPCMessage): m is JSONRPCMessage & { id: string | number; method: string } => 'method' in m && 'id' in m;

/** The MCP endpoint of a base URL: `https://f.example` and `https://f.example/v1` both mean `https://f.example/v1/mcp`. */
export function mcpEndpoint(base: string): URL {
  const u = new URL(base);
  const path = u.pathname.replace(/\/+$/, '').replace(/\/v1$/, '');
  return new URL(`${path}/v1/mcp`, u.origin);
}

/** Runs the bridge until stdin closes; resolves to the exit code (2 for usage errors, as `friction deploy`). */
export async function runMcpStdio(o: McpStdioOptions, env: Record<string, string | undefined> = process.env): Promise<number> {
  const say = (line: string) => process.stderr.write(`friction mcp: ${line}\n`);
  const base = o.url ?? env.FRICTION_URL;
  const key = o.key ?? env.FRICTION_KEY;
  if (!base || !/^https?:\/\//.test(base)) {
    say(`${base ? `--url must be an http(s) URL: ${base}` : '--url (or FRICTION_URL) is required'}\n\n${MCP_USAGE}`);
    return 2;
  }
  if (!key) {
    say(`--key (or FRICTION_KEY) is required\n\n${MCP_USAGE}`);
    return 2;
  }
  const endpoint = mcpEndpoint(base);
  const http = new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { authorization: `Bearer ${key}` } } });
  const stdio = new StdioServerTransport();
  const done = new Promise<void>((resolve) => {
    stdio.onclose = () => resolve();
  });
  http.onmessage = (m) => {
    // The negotiated protocol version travels as a header on every later request (MCP Streamable HTTP).
    const result = (m as { result?: { protocolVersion?: unknown } }).result;
    if (typeof result?.protocolVersion === 'string') http.setProtocolVersion(result.protocolVersion);
    void stdio.send(m);
  };
  http.onerror = (err) => say(`${endpoint.href}: ${err.message}`);
  stdio.onerror = (err) => say(`stdin: ${err.message}`);
  stdio.onmessage = (m) => {
    http.send(m).catch((err: Error) => {
      say(`${endpoint.href}: ${err.message}`);
      // A request must get an answer, or the assistant waits forever: the failure as a JSON-RPC error it can show.
      if (isRequest(m)) void stdio.send({ jsonrpc: '2.0', id: m.id, error: { code: -32000, message: `Friction at ${endpoint.origin} did not answer: ${err.message}` } });
    });
  };
  await http.start();
  await stdio.start();
  process.stdin.once('end', () => void stdio.close());
  say(`serving MCP on stdio, forwarding to ${endpoint.href}`);
  await done;
  await http.close();
  return 0;
}
