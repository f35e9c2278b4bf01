import { z } from 'zod';
import { ValidationError } from '../../../shared/errors.ts';
import { formatPath } from '../../../shared/http/envelope.ts';
import { explore } from '../../routes/explore/explore.engine.ts';
import { ExploreQuerySchema } from '../../read-models/explore.schema.ts';
import { defineTool, envOf, environmentArg, siteArg } from './tool.ts';

/**
 * The Explorer's grammar in one line: the full JSON schema would cost tools/list about 1.7 KB (assistants pay for it in
 * context), so the argument is checked here against the route's own schema and a bad one is a tool error naming its path.
 */
const QUERY_GRAMMAR =
  '{window_days:1-90=7, filters:[{field:signal|page|source|confused|converted|event_type, op:is|is_not|contains, value}] (≤12, AND-ed; boolean for confused/converted), output:{mode:"list",limit:1-500=100}|{mode:"measure",metric:count|avg_pageviews|conversion_rate|avg_dwell_ms|bounce_rate,group_by?:page|source|day|signal|cohort}}';

export const exploreTool = defineTool({
  name: 'explore',
  title: 'Explore sessions',
  description: 'Typed query over sessions and events: matching sessions, or a metric, optionally grouped.',
  input: { site_id: siteArg, environment: environmentArg, query: z.looseObject({}).describe(QUERY_GRAMMAR) },
  output: z.looseObject({
    result: z.looseObject({ mode: z.string() }),
    meta: z.looseObject({ truncated: z.boolean() }),
  }),
  async run(c, a, siteId) {
    const parsed = ExploreQuerySchema.safeParse(a.query);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new ValidationError(`query.${formatPath(issue.path)}: ${issue.message}`);
    }
    const answer = await explore(c.explore, {
      siteId,
      environment: envOf(a.environment),
      query: parsed.data,
      now: c.now(),
    });
    const r = answer.result;
    const summary =
      r.mode === 'list'
        ? `${r.sessions.length} session(s)${answer.meta.truncated ? ' (more match: raise output.limit or add filters)' : ''} over ${parsed.data.window_days} day(s)`
        : `${r.metric} = ${r.value ?? 'n/a'} over ${parsed.data.window_days} day(s)${r.groups.length ? `, ${r.groups.length} group(s)` : ''}`;
    return {
      data: answer as unknown as Record<string, unknown> & { result: { mode: string }; meta: { truncated: boolean } },
      summary,
    };
  },
});
