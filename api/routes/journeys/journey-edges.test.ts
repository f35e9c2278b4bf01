import test from 'ava';
import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import {
  journeyFrictionEdges as edgesOfSessions,
  journeySession,
  MAX_EDGE_EXAMPLES,
  MAX_JOURNEY_EDGES,
  type PathEvent,
} from './journey-edges.ts';
import { journeyFrictionEdgesByEvents } from './journeys.reference.ts';

/** The builder over sessions given as events (each session's path made by journeySession). */
const journeyFrictionEdges = (
  sessions: readonly { id: string; events: readonly PathEvent[] }[],
  weightOf: (t: string) => number | undefined,
  min: number,
) =>
  edgesOfSessions(
    sessions.map((s) => journeySession(s.id, s.events)),
    weightOf,
    min,
  );

const W: Record<string, number> = { rage_click: 10, error_encounter: 8 };
const weightOf = (t: string) => W[t];
const view = (page: string, ts: number): PathEvent => ({ type: 'page_view', page, ts });
const sig = (page: string, ts: number, signal: string, confidence?: number): PathEvent => ({
  type: 'signal',
  page,
  ts,
  signal,
  selector: '#b',
  confidence,
});

test('signals weigh on the edge into and out of their view; reloads are from = to; non-decorators do not count', (t) => {
  const edges = journeyFrictionEdges(
    [
      {
        id: 's1',
        events: [
          view('/a', 0),
          sig('/a', 1, 'rage_click', 0.5),
          sig('/a', 2, 'dead_click'),
          view('/a', 3),
          view('/b', 4),
        ],
      },
    ],
    weightOf,
    0,
  );
  t.deepEqual(
    edges.map((e) => [e.from, e.to, e.friction_weight, e.sessions]),
    [
      ['/a', '/a', 5, 1],
      ['/a', '/b', 0, 0],
    ],
  );
  t.deepEqual(edges[0].signals, { rage_click: 1 });
  t.deepEqual(edges[0].examples, [
    {
      session_id: 's1',
      page: '/a',
      signal_type: 'rage_click',
      element_selector: '#b',
      occurred_at: new Date(1).toISOString(),
    },
  ]);
});

test("the destination page's signals count too; weights sum to one decimal; min filter before the cap", (t) => {
  const s = {
    id: 's',
    events: [view('/a', 0), view('/b', 1), sig('/b', 2, 'error_encounter', 0.33), sig('/b', 3, 'rage_click', 0.33)],
  };
  const [e] = journeyFrictionEdges([s], weightOf, 1);
  t.like(e, { from: '/a', to: '/b', friction_weight: 5.9, sessions: 1 });
  t.deepEqual(journeyFrictionEdges([s], weightOf, 6), []);
  t.is(journeyFrictionEdges([s], weightOf, 5.9).length, 1, 'equal to the minimum stays');
});

test('property: at most 100 edges, at most 5 examples, sorted by weight, none below the minimum', (t) => {
  const pages = fc.constantFrom('/a', '/b', '/c', '/d', '/e', '/f', '/g', '/h', '/i', '/j', '/k', '/l');
  const event = fc.oneof(
    fc.record({ type: fc.constant<'page_view'>('page_view'), page: pages, ts: fc.integer({ min: 0, max: 1000 }) }),
    fc.record({
      type: fc.constant<'signal'>('signal'),
      page: pages,
      ts: fc.integer({ min: 0, max: 1000 }),
      signal: fc.constantFrom('rage_click', 'error_encounter', 'dead_click'),
      confidence: fc.double({ min: 0, max: 1, noNaN: true }),
    }),
  );
  fc.assert(
    fc.property(
      fc.array(fc.record({ id: fc.uuid(), events: fc.array(event, { maxLength: 60 }) }), { maxLength: 40 }),
      fc.integer({ min: 0, max: 30 }),
      (sessions, min) => {
        const edges = journeyFrictionEdges(sessions, weightOf, min);
        if (edges.length > MAX_JOURNEY_EDGES) return false;
        for (let i = 0; i < edges.length; i++) {
          const e = edges[i];
          if (e.examples.length > MAX_EDGE_EXAMPLES || e.friction_weight < min) return false;
          if (Math.round(e.friction_weight * 10) / 10 !== e.friction_weight) return false;
          if (i > 0 && edges[i - 1].friction_weight < e.friction_weight) return false;
          if (e.sessions > sessions.length) return false;
        }
        return true;
      },
    ),
  );
  t.pass();
});

test('more than 100 edges are cut to the 100 heaviest', (t) => {
  const sessions = Array.from({ length: 150 }, (_, i) => ({
    id: `s${i}`,
    events: [view(`/p${i}`, 0), sig(`/p${i}`, 1, 'rage_click', (i + 1) / 150), view('/end', 2)],
  }));
  const edges = journeyFrictionEdges(sessions, weightOf, 0);
  t.is(edges.length, 100);
  t.is(edges[0].from, '/p149');
  t.is(edges[99].from, '/p50');
});

test('property: the columnar builder gives the answer of the one-object-per-event builder, ties and all', (t) => {
  // Few pages and times, so sessions cross edges again, signals share times with views, and kept edges tie on weight.
  const pages = fc.constantFrom('/a', '/b', '/c', '/d', 'e\u0301', '\u00e9', '/A');
  const event = fc.oneof(
    fc.record({ type: fc.constant<'page_view'>('page_view'), page: pages, ts: fc.integer({ min: 0, max: 40 }) }),
    fc.record(
      {
        type: fc.constant<'signal'>('signal'),
        page: pages,
        ts: fc.integer({ min: 0, max: 40 }),
        signal: fc.constantFrom('rage_click', 'error_encounter', 'dead_click'),
        selector: fc.constantFrom('#b', '#c', null),
        confidence: fc.oneof(fc.constant(undefined), fc.double({ min: -0.5, max: 1.5, noNaN: true }), fc.constant(0.1)),
      },
      { requiredKeys: ['type', 'page', 'ts', 'signal'] },
    ),
  );
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          id: fc.constantFrom('s1', 's2', 's3', 's4', 's5', 's6'),
          events: fc.array(event, { maxLength: 30 }),
        }),
        {
          maxLength: 30,
        },
      ),
      fc.constantFrom(0, 1, 2, 5, 5.9, 10, 30),
      (sessions, min) => {
        t.deepEqual(
          journeyFrictionEdges(sessions, weightOf, min),
          journeyFrictionEdgesByEvents(sessions, weightOf, min),
        );
      },
    ),
    { numRuns: 500 },
  );
  t.pass();
});

test('property: the same answer past the 100-edge cap, with ties on weight and sessions at the 100th edge', (t) => {
  // 20 pages (400 possible edges) and whole weights, so more than 100 edges qualify and many tie at the cut.
  const page = fc.integer({ min: 0, max: 19 }).map((i) => `/p${i}`);
  const event = fc.oneof(
    fc.record({ type: fc.constant<'page_view'>('page_view'), page, ts: fc.integer({ min: 0, max: 200 }) }),
    fc.record({
      type: fc.constant<'signal'>('signal'),
      page,
      ts: fc.integer({ min: 0, max: 200 }),
      signal: fc.constantFrom('rage_click', 'error_encounter'),
    }),
  );
  let past = 0;
  fc.assert(
    fc.property(
      fc.array(fc.record({ id: fc.uuid(), events: fc.array(event, { minLength: 20, maxLength: 80 }) }), {
        minLength: 10,
        maxLength: 40,
      }),
      fc.constantFrom(0, 1, 10),
      (sessions, min) => {
        const byEvents = journeyFrictionEdgesByEvents(sessions, weightOf, min);
        if (byEvents.length === MAX_JOURNEY_EDGES) past++;
        return isDeepStrictEqual(journeyFrictionEdges(sessions, weightOf, min), byEvents);
      },
    ),
    { numRuns: 150 },
  );
  t.true(past > 10, 'answers reached the cap');
});
