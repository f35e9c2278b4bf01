import { checkDeployTool, listDeploysTool } from './deploys.tool.ts';
import { exploreTool } from './explore.tool.ts';
import { getIssueTool, listIssuesTool } from './issues.tool.ts';
import { journeysTool } from './journeys.tool.ts';
import { getPageTool } from './page.tool.ts';
import { siteContextTool } from './site-context.tool.ts';
import type { ToolDef } from './tool.ts';

/**
 * Every tool the MCP server offers, in the order tools/list shows them (at most 8: assistants pay for each in context).
 */
export const TOOLS: readonly ToolDef[] = [
  siteContextTool,
  listIssuesTool,
  getIssueTool,
  getPageTool,
  listDeploysTool,
  checkDeployTool,
  journeysTool,
  exploreTool,
] as unknown as readonly ToolDef[];
