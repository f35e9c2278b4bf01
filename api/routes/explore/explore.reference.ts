import type { Environment } from '../../../shared/domain/deploy-verification.ts';
import { CONFUSING_SIGNALS, DIRECT_SOURCE, type ExploreScope } from '../../read-models/explore.fields.ts';
import { answerFrame, byteOrder, presentSession } from './explore.presenter.ts';
import type { SessionEventGroup } from '../../read-models/explore.queries.ts';
import {
  EXPLORE_MAX_GROUPS,
  type ExploreAnswer,
  type ExploreFilter,
  type ExploreQuery,
  type Metric,
} from '../../read-models/explore.schema.ts';

/**
 * The Explore semantics executed over plain arrays (pure): the definitions of docs/explorer.md written as code,
 * against which the property test holds the SQL compiler. It reads the same stored rows the SQL reads (a session
 * row and its events) and nothing the compiler computes.
 */

export interface RefSession {
  site_id: string;
  id: string;
  started_at: number;
  last_seen_at: number;
  device: string;
  source: string | null;
  app_version: string | null;
  environment: string | null;
  page_views: number;
  conversions: number;
  revenue: number;
}

export interface RefEvent {
  site_id: string;
  session_id: string;
  ts: number;
  type: string;
  page: string;
  signal: string | null;
}

const CONFUSING = new Set(CONFUSING_SIGNALS);
const DAY_MS = 86_400_000;

const sourceOf = (s: RefSession) => (s.source === null || s.source === '' ? DIRECT_SOURCE : s.source);
const cohortOf = (s: RefSession) => (s.app_version === null || s.app_version === '' ? null : s.app_version);
const inEnvironment = (s: RefSession, env: Environment) =>
  env === 'staging' ? s.environment === 'staging' : s.environment !== 'staging';
const matchText = (actual: string | null, op: 'is' | 'contains', value: string) =>
  actual !== null && (op === 'is' ? actual === value : actual.includes(value));

function passes(s: RefSession, events: readonly RefEvent[], f: ExploreFilter): boolean {
  switch (f.field) {
    case 'converted':
      return s.conversions > 0 === ((f.op === 'is') === f.value);
    case 'confused': {
      const confused = events.some((e) => e.type === 'signal' && e.signal !== null && CONFUSING.has(e.signal));
      return confused === ((f.op === 'is') === f.value);
    }
    case 'source':
      return f.op === 'is_not' ? sourceOf(s) !== f.value : matchText(sourceOf(s), f.op, f.value);
    case 'page':
    case 'signal':
    case 'event_type': {
      const op = f.op === 'is_not' ? 'is' : f.op;
      const has = events.some((e) =>
        f.field === 'page'
          ? matchText(e.page, op, f.value)
          : f.field === 'event_type'
            ? matchText(e.type, op, f.value)
            : e.type === 'signal' && matchText(e.signal, op, f.value),
      );
      return f.op === 'is_not' ? !has : has;
    }
  }
}

function metricOf(metric: Metric, sessions: readonly RefSession[]): number | null {
  if (metric === 'count') return sessions.length;
  if (sessions.length === 0) return null;
  const per = (s: RefSession): number => {
    switch (metric) {
      case 'avg_pageviews':
        return s.page_views;
      case 'conversion_rate':
        return s.conversions > 0 ? 1 : 0;
      case 'avg_dwell_ms':
        return s.last_seen_at - s.started_at;
      case 'bounce_rate':
        return s.page_views < 2 ? 1 : 0;
    }
  };
  return sessions.reduce((a, s) => a + per(s), 0) / sessions.length;
}

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The answer the engine must give for `query` over these rows (meta without took_ms; rows_scanned null). */
export function referenceExplore(
  data: { sessions: readonly RefSession[]; events: readonly RefEvent[] },
  req: { siteId: string; environment: Environment; query: ExploreQuery; now: Date },
): ExploreAnswer {
  const { query } = req;
  const scope: ExploreScope = {
    siteId: req.siteId,
    environment: req.environment,
    from: new Date(req.now.getTime() - query.window_days * DAY_MS),
    to: req.now,
  };
  const eventsOf = new Map<string, RefEvent[]>();
  for (const e of data.events) {
    if (e.site_id !== req.siteId) continue;
    const list = eventsOf.get(e.session_id);
    if (list) list.push(e);
    else eventsOf.set(e.session_id, [e]);
  }
  const matching = data.sessions.filter(
    (s) =>
      s.site_id === req.siteId &&
      inEnvironment(s, req.environment) &&
      s.started_at >= scope.from.getTime() &&
      s.started_at <= scope.to.getTime() &&
      query.filters.every((f) => passes(s, eventsOf.get(s.id) ?? [], f)),
  );
  const { head, meta } = answerFrame(req, scope);
  const output = query.output;
  if (output.mode === 'list') {
    const sorted = [...matching].sort((a, b) => b.started_at - a.started_at || byteOrder(a.id, b.id));
    const sessions = sorted.slice(0, output.limit).map((s) => {
      const groups = new Map<string, SessionEventGroup>();
      for (const e of eventsOf.get(s.id) ?? []) {
        const k = JSON.stringify([e.page, e.type, e.signal]);
        const g = groups.get(k);
        if (g) {
          g.n++;
          if (e.ts < g.first_ms) g.first_ms = e.ts;
        } else
          groups.set(k, {
            session_id: s.id,
            page: e.page,
            type: e.type,
            signal: e.signal,
            first_ms: e.ts,
            n: 1,
          });
      }
      return presentSession(
        {
          id: s.id,
          started_at: new Date(s.started_at),
          last_seen_at: new Date(s.last_seen_at),
          device: s.device,
          source: sourceOf(s),
          app_version: cohortOf(s),
          page_views: s.page_views,
          conversions: s.conversions,
          revenue: s.revenue,
          dwell_ms: s.last_seen_at - s.started_at,
        },
        [...groups.values()],
      );
    });
    return { ...head, result: { mode: 'list', sessions }, meta: meta(sorted.length > output.limit) };
  }
  const unit = (
    {
      count: 'sessions',
      avg_pageviews: 'page_views',
      conversion_rate: 'ratio',
      avg_dwell_ms: 'ms',
      bounce_rate: 'ratio',
    } as const
  )[output.metric];
  let groups: { key: string | null; value: number | null; sessions: number }[] = [];
  if (output.group_by) {
    const members = new Map<string | null, RefSession[]>();
    const add = (k: string | null, s: RefSession) => {
      const list = members.get(k);
      if (list) list.push(s);
      else members.set(k, [s]);
    };
    for (const s of matching) {
      const events = eventsOf.get(s.id) ?? [];
      let keys: (string | null)[];
      switch (output.group_by) {
        case 'source':
          keys = [sourceOf(s)];
          break;
        case 'day':
          keys = [utcDay(s.started_at)];
          break;
        case 'cohort':
          keys = [cohortOf(s)];
          break;
        case 'page':
          keys = [...new Set(events.map((e) => e.page))];
          break;
        case 'signal':
          keys = [...new Set(events.filter((e) => e.type === 'signal' && e.signal !== null).map((e) => e.signal))];
          break;
      }
      if (keys.length === 0) keys = [null];
      for (const k of keys) add(k, s);
    }
    const keyOrder = (a: string | null, b: string | null) =>
      a === b ? 0 : a === null ? 1 : b === null ? -1 : byteOrder(a, b);
    groups = [...members]
      .map(([key, ss]) => ({ key, value: metricOf(output.metric, ss), sessions: ss.length }))
      .sort(
        output.group_by === 'day'
          ? (a, b) => keyOrder(a.key, b.key)
          : (a, b) => b.sessions - a.sessions || keyOrder(a.key, b.key),
      );
  }
  return {
    ...head,
    result: {
      mode: 'measure',
      metric: output.metric,
      unit,
      group_by: output.group_by ?? null,
      value: metricOf(output.metric, matching),
      sessions: matching.length,
      groups: groups.slice(0, EXPLORE_MAX_GROUPS),
    },
    meta: meta(groups.length > EXPLORE_MAX_GROUPS),
  };
}
