import { sql, type Kysely } from 'kysely';
import type { ExploreEngineDeps } from '../routes/explore/explore.engine.ts';
import { z } from 'zod';
import type { Database } from '../../shared/db/database.ts';
import { AppError, NotFoundError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/logger.ts';
import type { Principal } from '../http/auth.ts';
import { insertAuditEntry } from '../http/audit.ts';
import { McpServer, McpError, ErrorCode, type CallToolResult, type GetPromptResult } from './sdk.ts';
import { TOOLS } from './tools/index.ts';
import { checkDeployTool, findCheckedDeploy, presentCheck } from './tools/deploys.tool.ts';
import { resolveSite, type ToolContext, type ToolDef } from './tools/tool.ts';

export const SERVER_INFO = { name: 'friction', version: '1.0.0' };

export interface McpDeps {
  db: Kysely<Database>;
  log: Logger;
  now(): Date;
  /** The Explorer's engine settings, as its REST route has them. */
  explore: ExploreEngineDeps;
}

/** What each verdict means, in the words the prompt hands the assistant (docs/mcp.md says the same). */
export const VERDICT_MEANINGS = {
  PASS: 'PASS: enough post-deploy traffic was measured, no issue regressed, no high-severity issue appeared and the confusion score did not rise past the spike threshold.',
  WARN: 'WARN: not conclusive yet, usually not enough traffic since the deploy (under 15 minutes of post-deploy data), or the issues tested could not be decided; check again later.',
  FAIL: 'FAIL: an issue regressed, a high-severity issue appeared after the deploy, or the confusion score rose past the spike threshold.',
} as const;

/**
 * A tool's failure as the assistant sees it: our errors carry messages meant for callers (not found, bad input); anything
 * else is logged with the request id and answered without internals.
 */
function toolError(err: unknown, deps: McpDeps, requestId: string, tool: string): CallToolResult {
  let text: string;
  if (err instanceof AppError && err.status < 500) text = err.message;
  else {
    deps.log.error({ err, request_id: requestId, tool }, 'MCP tool failed');
    text = `internal error while running ${tool}; try again, or report request id ${requestId}`;
  }
  return { isError: true, content: [{ type: 'text', text }] };
}

/**
 * One audit row per tool call: tool, key or user, site, duration and outcome; never the arguments. Off the answer's
 * path and committed asynchronously (synchronous_commit off for this transaction only): awaiting the insert and its
 * WAL flush cost a read 10-20 ms on a busy machine, most of the MCP overhead over the REST route. A crash of the API
 * process or the database in that moment may lose these rows (reads only), never a write's.
 */
async function auditCall(
  deps: McpDeps,
  principal: Principal,
  tool: string,
  siteId: string | null,
  ms: number,
  ok: boolean,
): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    await sql`set local synchronous_commit = off`.execute(trx);
    await insertAuditEntry(trx, {
      orgId: principal.orgId,
      siteId,
      actorType: principal.kind,
      actorId: principal.kind === 'user' ? principal.userId : principal.keyId,
      actor: principal.label,
      action: 'mcp.tool_call',
      targetType: 'mcp_tool',
      targetId: tool,
      summary: { tool, duration_ms: Math.round(ms * 10) / 10, outcome: ok ? 'ok' : 'error' },
    });
  });
}

function registerTool(
  server: McpServer,
  t: ToolDef,
  c: ToolContext & { afterAnswer(p: Promise<void>): void },
  deps: McpDeps,
  requestId: string,
): void {
  server.registerTool(
    t.name,
    {
      title: t.title,
      description: t.description,
      inputSchema: t.input,
      outputSchema: t.output,
      // destructiveHint and idempotentHint mean something only when readOnlyHint is false (MCP spec): left out, saving tools/list bytes.
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (async (args: Record<string, unknown>) => {
      const t0 = performance.now();
      let siteId: string | null = null;
      let result: CallToolResult;
      try {
        siteId = resolveSite(c.principal, args.site_id as string | undefined);
        const answer = await t.run(c, args as never, siteId);
        result = {
          structuredContent: answer.data as Record<string, unknown>,
          content: [{ type: 'text', text: answer.summary }],
        };
      } catch (err) {
        result = toolError(err, deps, requestId, t.name);
      }
      // Not awaited: the row is written while the answer travels.
      c.afterAnswer(auditCall(deps, c.principal, t.name, siteId, performance.now() - t0, !result.isError));
      return result;
    }) as never,
  );
}

/** The `post_deploy_check` prompt: the check's current verdict, and the instructions to confirm it with the tool and explain it. */
function registerPrompt(server: McpServer, c: ToolContext): void {
  server.registerPrompt(
    'post_deploy_check',
    {
      title: 'Post-deploy check',
      description: 'Did this deploy make the site worse? Answers PASS, WARN or FAIL and explains why.',
      argsSchema: {
        deploy: z.string().min(1).max(128).describe('deploy id or version'),
        site_id: z.string().max(64).optional().describe("site id; default the key's own site"),
      },
    },
    async ({ deploy, site_id }): Promise<GetPromptResult> => {
      let check;
      try {
        // A malformed site id is answered like another tenant's: not found.
        if (site_id !== undefined && !z.uuid().safeParse(site_id).success) throw new NotFoundError('site not found');
        const siteId = resolveSite(c.principal, site_id);
        const d = await findCheckedDeploy(c, siteId, 'production', deploy);
        if (!d)
          throw new NotFoundError(`deploy not found: no deploy with id or production version "${deploy}" on this site`);
        check = presentCheck(d);
      } catch (err) {
        if (err instanceof AppError && err.status < 500) throw new McpError(ErrorCode.InvalidParams, err.message);
        throw err;
      }
      const args = JSON.stringify({ deploy, ...(site_id ? { site_id } : {}) });
      const d = check.deploy;
      return {
        description: `Post-deploy check of ${d.version}: ${check.verdict}`,
        messages: [
          {
            role: 'user',
            content: {
              type: 'text',
              text: [
                `Did deploy ${d.version} (${d.environment}, recorded ${d.recorded_at}) make the site worse?`,
                `Friction's verdict now: ${check.verdict}. Reasons: ${check.verdict_reasons.join('; ')}.`,
                `Confusion score before ${d.confusion_before}, after ${d.confusion_after ?? 'not measured yet'}, delta ${d.delta ?? 'n/a'}.`,
                `Call the ${checkDeployTool.name} tool with ${args} for the current numbers, then explain the verdict in plain words: what changed, which issues regressed, appeared or were verified fixed, and what to do next.`,
                `What the verdicts mean. ${VERDICT_MEANINGS.PASS} ${VERDICT_MEANINGS.WARN} ${VERDICT_MEANINGS.FAIL}`,
              ].join('\n'),
            },
          },
        ],
      };
    },
  );
}

/**
 * A server for one request (the transport is stateless: no session outlives the request), answering as `principal`.
 * Tools and the prompt read through the same functions as the REST routes they stand beside.
 */
export function buildMcpServer(
  deps: McpDeps,
  principal: Principal,
  requestId: string,
  afterAnswer: (p: Promise<void>) => void,
): McpServer {
  const server = new McpServer(SERVER_INFO, {
    capabilities: { tools: {}, prompts: {} },
    instructions:
      'Friction measures UX friction: confusion scores per page, ranked issues, deploy verdicts. Start with get_site_context; all tools are read-only.',
  });
  const c: ToolContext & { afterAnswer: typeof afterAnswer } = {
    db: deps.db,
    now: deps.now,
    principal,
    explore: deps.explore,
    afterAnswer,
  };
  for (const t of TOOLS) registerTool(server, t, c, deps, requestId);
  registerPrompt(server, c);
  return server;
}
