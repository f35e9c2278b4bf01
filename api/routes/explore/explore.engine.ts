import type { Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import type { Environment } from '../../../shared/domain/deploy-verification.ts';
import { METRIC_SQL, type ExploreScope } from '../../read-models/explore.fields.ts';
import { answerFrame, presentSession } from './explore.presenter.ts';
import {
  listMatchingSessions,
  measureGroups,
  measureTotal,
  readOnlyWithTimeout,
  sessionEventGroups,
  type SessionEventGroup,
} from '../../read-models/explore.queries.ts';
import { measureFromRollup, rollupAnswers } from '../../read-models/explore.rollup.ts';
import {
  EXPLORE_MAX_GROUPS,
  type ExploreAnswer,
  type ExploreQuery,
  type ExploreResult,
} from '../../read-models/explore.schema.ts';

const DAY_MS = 86_400_000;

export interface ExploreRequest {
  siteId: string;
  environment: Environment;
  query: ExploreQuery;
  now: Date;
}

export interface ExploreEngineDeps {
  db: Kysely<Database>;
  kind: 'postgres' | 'pglite';
  /** Statement timeout of one Explore query (EXPLORE_STATEMENT_TIMEOUT_MS). */
  timeoutMs: number;
}

/** The window a query covers: sessions whose first event is in the last `window_days` × 24 h up to `now`. */
export function exploreScope(req: ExploreRequest): ExploreScope {
  return {
    siteId: req.siteId,
    environment: req.environment,
    from: new Date(req.now.getTime() - req.query.window_days * DAY_MS),
    to: req.now,
  };
}

/**
 * The one Explore engine behind GET and POST: compiles the validated query through the field map and runs it
 * read-only under the statement timeout. The answer echoes the query as run and says what was cut.
 */
export async function explore(deps: ExploreEngineDeps, req: ExploreRequest): Promise<ExploreResult> {
  const started = performance.now();
  const answer = await readOnlyWithTimeout(deps.db, deps.kind, deps.timeoutMs, (trx) => answerQuery(trx, req));
  return {
    ...answer,
    meta: {
      took_ms: Math.round((performance.now() - started) * 10) / 10,
      ...answer.meta,
      statement_timeout_ms: deps.timeoutMs,
    },
  };
}

/** The answer without timing: what the reference evaluator (explore.reference.ts) must equal. */
export async function answerQuery(db: Kysely<Database>, req: ExploreRequest): Promise<ExploreAnswer> {
  const scope = exploreScope(req);
  const { query } = req;
  const { head, meta } = answerFrame(req, scope);
  const output = query.output;
  if (output.mode === 'list') {
    const rows = await listMatchingSessions(db, scope, query.filters, output.limit);
    const listed = rows.slice(0, output.limit);
    const bySession = new Map<string, SessionEventGroup[]>();
    for (const g of await sessionEventGroups(
      db,
      scope,
      listed.map((r) => r.id),
    )) {
      const list = bySession.get(g.session_id);
      if (list) list.push(g);
      else bySession.set(g.session_id, [g]);
    }
    return {
      ...head,
      result: { mode: 'list', sessions: listed.map((r) => presentSession(r, bySession.get(r.id) ?? [])) },
      meta: meta(rows.length > output.limit),
    };
  }
  const fromRollup = rollupAnswers(query.filters, output.group_by);
  const total = fromRollup
    ? (await measureFromRollup(db, scope, query.filters, output.metric, undefined))[0]
    : await measureTotal(db, scope, query.filters, output);
  const groups = !output.group_by
    ? []
    : fromRollup
      ? await measureFromRollup(db, scope, query.filters, output.metric, output.group_by)
      : await measureGroups(db, scope, query.filters, output.metric, output.group_by);
  return {
    ...head,
    result: {
      mode: 'measure',
      metric: output.metric,
      unit: METRIC_SQL[output.metric].unit,
      group_by: output.group_by ?? null,
      value: total.value,
      sessions: total.sessions,
      groups: groups.slice(0, EXPLORE_MAX_GROUPS).map((g) => ({ key: g.key, value: g.value, sessions: g.sessions })),
    },
    meta: meta(groups.length > EXPLORE_MAX_GROUPS),
  };
}
