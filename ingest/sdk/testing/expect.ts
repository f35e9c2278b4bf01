/**
 * Matching what the SDK sent against a scenario's labels. Used by the detection test (which fails
 * on any difference) and by the bench (which counts them).
 */
import type { Expected, Scenario } from '../fixtures/scenarios.ts';
import type { SentEvent } from './run-visit.ts';
import type { ClickRecord } from './visitor.ts';

/** Sub-pixel positions are rounded by the browser (clientX is an integer): allow 1.5 px either way. */
function near(actual: number | undefined, expected: number, sizePx: number): boolean {
  return actual !== undefined && Math.abs(actual - expected) <= (1.5 / sizePx) * 1000 + 1;
}

/** Why the signal's coordinates do not match the recorded click, or null when they do. */
export function coordinateProblem(
  e: Pick<SentEvent, 'x' | 'y' | 'vx' | 'vy' | 'px' | 'py'>,
  c: ClickRecord,
): string | null {
  const want = {
    x: [((c.cx - c.box.x) / c.box.width) * 1000, c.box.width],
    y: [((c.cy - c.box.y) / c.box.height) * 1000, c.box.height],
    vx: [(c.cx / c.vw) * 1000, c.vw],
    vy: [(c.cy / c.vh) * 1000, c.vh],
    px: [((c.cx + c.scrollX) / c.docW) * 1000, c.docW],
    py: [((c.cy + c.scrollY) / c.docH) * 1000, c.docH],
  } as const;
  const bad = (Object.keys(want) as (keyof typeof want)[]).filter((k) => !near(e[k], want[k][0], want[k][1]));
  return bad.length ? bad.map((k) => `${k}=${e[k]} (want ≈${Math.round(want[k][0])})`).join(', ') : null;
}

export interface Judgement {
  /** Expected signals found, with any problem in their details. */
  found: { expected: Expected; event: SentEvent; problems: string[] }[];
  missing: Expected[];
  /** Signals nobody asked for: false positives. */
  unexpected: SentEvent[];
}

const describeEvent = (e: SentEvent): string => `${e.signal} ${e.selector ?? '(no selector)'} on ${e.page}`;
export const describeExpected = (x: Expected): string => `${x.signal} ${x.selector ?? '(no selector)'} on ${x.page}`;
export const describeSignals = (list: SentEvent[]): string => list.map(describeEvent).join('; ') || 'none';

/** Pairs each expected signal with one sent signal of the same type, selector and page. */
export function judge(scenario: Scenario, signals: SentEvent[], clicks: Map<string, ClickRecord>): Judgement {
  const left = [...signals];
  const found: Judgement['found'] = [];
  const missing: Expected[] = [];
  for (const x of scenario.expected) {
    const i = left.findIndex((e) => e.signal === x.signal && e.selector === x.selector && e.page === x.page);
    if (i < 0) {
      missing.push(x);
      continue;
    }
    const [event] = left.splice(i, 1);
    const problems: string[] = [];
    if (x.label !== undefined && event.label !== x.label)
      problems.push(`label=${JSON.stringify(event.label)} (want ${JSON.stringify(x.label)})`);
    for (const [k, v] of Object.entries(x.meta ?? {})) {
      if (event.meta?.[k] !== v)
        problems.push(`meta.${k}=${JSON.stringify(event.meta?.[k])} (want ${JSON.stringify(v)})`);
    }
    if (x.clicked) {
      const c = clicks.get(x.clicked);
      const p = c ? coordinateProblem(event, c) : `no click recorded on ${x.clicked}`;
      if (p) problems.push(p);
    }
    found.push({ expected: x, event, problems });
  }
  return { found, missing, unexpected: left };
}
