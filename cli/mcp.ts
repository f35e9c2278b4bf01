/**
 * `friction mcp --url <base> --key <key>`: MCP over stdio for desktop assistants, bridged to the server's stateless
 * `POST /v1/mcp` (JSON answers), so there is one implementation of the tools (the API role's) and this process holds
 * no data. It speaks the two transports' framing itself (newline-delimited JSON-RPC on stdio, one POST a message) so
 * that the `@friction/cli` bundle needs no MCP SDK and imports only node built-ins. stdout carries nothing but
 * protocol messages; everything said to a human goes to stderr.
 */
import { createInterface } from 'node:readline';
import { unreachable, type CliIo } from '../ops/deploy-cli.ts';

export const MCP_USAGE = `friction mcp --url <base URL> --key <svc_mcp_… key>   (or env FRICTION_URL, FRICTION_KEY)

Serves MCP over stdio for a desktop assistant, forwarding every message to <base URL>/v1/mcp with the key.
Logs go to stderr; stdout carries only MCP messages.`;

type JsonRpcMessage = {
  jsonrpc: '2.0';
  id?: string | number | null;
  method?: string;
  result?: unknown;
  error?: unknown;
};

/** The MCP endpoint of a base URL: `https://f.example` and `https://f.example/v1` both mean `https://f.example/v1/mcp`. */
export function mcpEndpoint(base: string): URL {
  const u = new URL(base);
  const path = u.pathname.replace(/\/+$/, '').replace(/\/v1$/, '');
  return new URL(`${path}/v1/mcp`, u.origin);
}

function parseArgs(argv: readonly string[]): { url?: string; key?: string; help?: boolean; bad?: string } {
  const out: { url?: string; key?: string; help?: boolean; bad?: string } = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const [flag, inline] =
      a.startsWith('--') && a.includes('=')
        ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]
        : [a, undefined];
    if (flag === '--help' || flag === '-h') out.help = true;
    else if (flag === '--url' || flag === '--key') {
      const v = inline ?? argv[++i];
      if (v === undefined) return { bad: `${flag} needs a value` };
      if (flag === '--url') out.url = v;
      else out.key = v;
    } else return { bad: `unknown option ${a}` };
  }
  return out;
}

/** The JSON-RPC messages of an answer: a JSON body (one message or a batch) or an event stream's `data:` lines. */
function messagesOf(contentType: string, text: string): JsonRpcMessage[] {
  if (contentType.includes('text/event-stream')) {
    return text
      .split(/\r?\n\r?\n/)
      .map((ev) =>
        ev
          .split(/\r?\n/)
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trimStart())
          .join('\n'),
      )
      .filter((d) => d !== '')
      .flatMap((d) => [JSON.parse(d) as JsonRpcMessage | JsonRpcMessage[]].flat());
  }
  return text.trim() === '' ? [] : [JSON.parse(text) as JsonRpcMessage | JsonRpcMessage[]].flat();
}

/** Runs the bridge until stdin closes; resolves to the exit code (2 for usage errors, as `friction deploy`). */
export async function runMcpCommand(
  argv: readonly string[],
  io: CliIo,
  input: NodeJS.ReadableStream = process.stdin,
): Promise<number> {
  const say = (line: string) => io.err(`friction mcp: ${line}`);
  const args = parseArgs(argv);
  if (args.help) {
    io.err(MCP_USAGE);
    return 0;
  }
  const base = args.url ?? io.env.FRICTION_URL;
  const key = args.key ?? io.env.FRICTION_KEY;
  const problem =
    args.bad ??
    (!base
      ? '--url (or FRICTION_URL) is required'
      : !/^https?:\/\//.test(base)
        ? `--url must be an http(s) URL: ${base}`
        : !key
          ? '--key (or FRICTION_KEY) is required'
          : undefined);
  if (problem) {
    say(`${problem}\n\n${MCP_USAGE}`);
    return 2;
  }
  const endpoint = mcpEndpoint(base!);
  // The negotiated protocol version travels as a header on every request after initialize (MCP Streamable HTTP).
  let protocolVersion: string | undefined;
  const write = (m: JsonRpcMessage) => process.stdout.write(`${JSON.stringify(m)}\n`);
  // A request must get an answer, or the assistant waits forever: a failure becomes a JSON-RPC error it can show.
  const failed = (m: JsonRpcMessage, why: string) => {
    say(`${endpoint.href}: ${why}`);
    if (m.method !== undefined && m.id !== undefined && m.id !== null) {
      write({
        jsonrpc: '2.0',
        id: m.id,
        error: { code: -32000, message: `Friction at ${endpoint.origin} did not answer: ${why}` },
      });
    }
  };

  async function forward(m: JsonRpcMessage): Promise<void> {
    let res: Response;
    try {
      res = await io.fetch(endpoint, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(protocolVersion ? { 'mcp-protocol-version': protocolVersion } : {}),
        },
        body: JSON.stringify(m),
        signal: AbortSignal.timeout(60_000),
      });
    } catch (err) {
      failed(m, unreachable(err));
      return;
    }
    const text = await res.text();
    let answers: JsonRpcMessage[];
    try {
      answers = messagesOf(res.headers.get('content-type') ?? '', text);
    } catch {
      failed(m, `HTTP ${res.status} with a body that is not JSON-RPC`);
      return;
    }
    const rpc = answers.filter((a) => a && a.jsonrpc === '2.0');
    if (!res.ok && !rpc.some((a) => a.id !== undefined && a.id === m.id)) {
      failed(m, `HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ''}`);
      return;
    }
    for (const a of rpc) {
      const v = (a.result as { protocolVersion?: unknown } | undefined)?.protocolVersion;
      if (typeof v === 'string') protocolVersion = v;
      write(a);
    }
  }

  say(`serving MCP on stdio, forwarding to ${endpoint.href}`);
  // One message at a time, in order: an assistant's initialize is answered before what follows it.
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    if (line.trim() === '') continue;
    let parsed: JsonRpcMessage | JsonRpcMessage[];
    try {
      parsed = JSON.parse(line) as JsonRpcMessage | JsonRpcMessage[];
    } catch {
      say('stdin: a line that is not JSON was skipped');
      continue;
    }
    for (const m of [parsed].flat()) await forward(m);
  }
  return 0;
}
