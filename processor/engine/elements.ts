import { signalDefinition, signalWeight } from '../../shared/domain/signal-catalog.ts';
import { ClusterReader, siteElements, type ClusterState, type ElementParts } from './cluster-state.ts';
import type { Latest } from './cluster-model.ts';
import { dominantSignal, round1 } from './confusion-score.ts';
import { compareStrings, sortedRecord } from './util.ts';

/**
 * Element aggregates per page (the data behind `/query/elements` and the `elements[]` of `/query/page`): every
 * element with signals in the cluster window (7 days), across signal types. An element is (site, page, canonical
 * selector); page-level signals without a selector (navigation loops, some form signals) are not elements.
 */

/** Friction points (Σ weight × affected sessions per type) at which an element's friction score reaches 63.2. */
export const ELEMENT_SCALE = 50;

/** One element of a page over the cluster window (7 days). */
export interface ElementAggregate {
  readonly siteId: string;
  readonly page: string;
  /** Latest raw selector seen (valid for the element heatmap). */
  readonly selector: string;
  /** The canonical selector the element is keyed by (selectors.ts). */
  readonly canonicalSelector: string;
  /** Latest non-empty label, or null. */
  readonly label: string | null;
  /** Signals in the window by type (unknown types included; they weigh 0). */
  readonly signals: Readonly<Record<string, number>>;
  /** Σ of `signals`. */
  readonly signalCount: number;
  /** 0..100, one decimal: 100 · (1 − e^(−Σ weight × affected sessions of the type / 50)). */
  readonly frictionScore: number;
  /** Type with the largest weight × affected sessions; null when nothing weighs. */
  readonly dominantSignal: string | null;
  /** Distinct sessions with any signal on the element in the window. */
  readonly affectedUsers: number;
  /** The catalog's fix for the dominant signal; null when there is none. */
  readonly recommendation: string | null;
  /** Epoch ms of the latest signal on the element. */
  readonly lastSignalAt: number;
}

/**
 * Friction score of an element from its affected sessions per signal type. Distinct sessions rather than signal
 * counts, so one visitor hammering a button weighs as one visitor: breadth is what makes an element worth fixing.
 */
export function elementFrictionScore(affectedByType: Readonly<Record<string, number>>): number {
  let points = 0;
  for (const [type, sessions] of Object.entries(affectedByType)) points += signalWeight(type) * sessions;
  return round1(100 * (1 - Math.exp(-points / ELEMENT_SCALE)));
}

/** Orders elements: friction score, then signal count, then page and selector (desc, desc, asc, asc). */
export function compareElements(a: ElementAggregate, b: ElementAggregate): number {
  return (
    b.frictionScore - a.frictionScore ||
    b.signalCount - a.signalCount ||
    compareStrings(a.page, b.page) ||
    compareStrings(a.canonicalSelector, b.canonicalSelector)
  );
}

/** A ranked copy of `elements`. */
export function rankElements(elements: readonly ElementAggregate[]): ElementAggregate[] {
  return [...elements].sort(compareElements);
}

export type { ElementParts } from './cluster-state.ts';

/**
 * An element while signals are folded into it, before its parts are finished (the engine's recompute, the set-based
 * derive): the latest raw selector and label, signal counts by type and the last signal's time; `A` stands for the
 * sessions each type affected (the sessions themselves, or their count).
 */
export interface ElementDraft<A> {
  page: string;
  canonical: string;
  selector: Latest | null;
  label: Latest | null;
  signals: Map<string, number>;
  byType: Map<string, A>;
  last: number;
}

/** An element draft of nothing yet, its last signal at `last`. */
export const elementDraft = <A>(page: string, canonical: string, last: number): ElementDraft<A> => ({
  page,
  canonical,
  selector: null,
  label: null,
  signals: new Map(),
  byType: new Map(),
  last,
});

/** Finishes an element from its parts. */
export function aggregateElement(p: ElementParts): ElementAggregate {
  const affected = sortedRecord(p.affectedByType);
  const signals = sortedRecord(p.signals);
  const dominant = dominantSignal(affected);
  let signalCount = 0;
  for (const n of p.signals.values()) signalCount += n;
  return {
    siteId: p.siteId,
    page: p.page,
    selector: p.selector.value,
    canonicalSelector: p.canonicalSelector,
    label: p.label?.value ?? null,
    signals,
    signalCount,
    frictionScore: elementFrictionScore(affected),
    dominantSignal: dominant,
    affectedUsers: p.affectedUsers,
    recommendation: dominant === null ? null : (signalDefinition(dominant)?.recommendation ?? null),
    lastSignalAt: p.lastSignalAt,
  };
}

/** Ranked element aggregates of a site at `now`, optionally of one page only. O(elements and their types). */
export function elementsFromState(state: ClusterState, siteId: string, now: number, page?: string): ElementAggregate[] {
  const reader = new ClusterReader(state);
  const out: ElementAggregate[] = [];
  for (const { page: p, element } of siteElements(state, siteId, page)) {
    const parts = reader.elementParts(siteId, p, element.selector, now);
    if (parts !== null) out.push(aggregateElement(parts));
  }
  return rankElements(out);
}
