/**
 * The signal catalog: every signal type the engine knows, how much it weighs, and what to do about it.
 * This is the data behind `GET /v1/query/heuristics`. A type missing here is still stored, but weighs 0: it moves
 * no score, opens no issue and is never dominant until it is catalogued.
 *
 * Weights are integer points on a 0..10 scale, rage_click = 10 being the reference. Integers keep every sum the
 * engine maintains exact, so incremental and recomputed results agree to the last bit. The reasons for each weight
 * sit beside it below and in docs/scoring.md.
 */

/** One catalog entry, as served by the heuristics route. */
export interface SignalDefinition {
  /** Signal type name, lowercase snake_case, as the SDK sends it. */
  type: string;
  /** Friction points per occurrence, integer 0..10. */
  weight: number;
  /** Whether journey-friction edges are decorated with this signal (it explains why a visitor moved on). */
  journey_edge_decorator: boolean;
  /** A concrete fix to try first when this signal dominates an element or page. */
  recommendation: string;
  /** The detection rule the SDK applies before it sends this signal. */
  detection: string;
}

/** Top of the weight scale; severity divides by it, so the reference signal (rage_click) can reach 100. */
export const MAX_SIGNAL_WEIGHT = 10;

/** Every catalogued signal type, heaviest first; frozen (entries included). */
export const SIGNAL_CATALOG: readonly SignalDefinition[] = Object.freeze(
  [
    {
      type: 'rage_click',
      // The reference: repeated clicking in one spot is the most explicit, least ambiguous frustration a page can see.
      weight: 10,
      journey_edge_decorator: true,
      recommendation:
        'Make the element respond within 100 ms: give immediate visual feedback (pressed state, spinner), fix the click handler, or make it look non-interactive if it is not.',
      detection:
        '3 or more clicks on the same element, each within 1000 ms and 30 px of the previous one; text selection, steppers, pagination and toggles excluded.',
    },
    {
      type: 'error_encounter',
      // A visible error stops the task, but many are validation messages the visitor fixes at once: below rage.
      weight: 8,
      journey_edge_decorator: true,
      recommendation:
        'Fix the failing call or script, and word the error so the visitor knows what to do next; validate inline before submit rather than after.',
      detection:
        'An uncaught error or unhandled rejection, or an error state shown after a visitor action (aria-invalid, role=alert appearing).',
    },
    {
      type: 'disabled_element_attempt',
      // The visitor tried to go on and the page refused without saying why; intent is clear, cause often benign (a
      // required field), so a step below errors.
      weight: 7,
      journey_edge_decorator: false,
      recommendation:
        'Say why the control is disabled and what is missing (inline hint next to it), or keep it enabled and validate on click with a clear message.',
      detection: 'A click on a [disabled] or aria-disabled element, or on a control inside a disabled fieldset.',
    },
    {
      type: 'form_abandon',
      // A lost task, but visitors also leave forms for reasons the page cannot fix (changed their mind, comparing).
      weight: 6,
      journey_edge_decorator: true,
      recommendation:
        'Shorten the form: drop optional fields, show progress, keep entered values on navigation, and surface errors next to the field that caused them.',
      detection:
        'At least one field of a form was filled and the page was left (pagehide or route change) without a submit.',
    },
    {
      type: 'dead_click',
      // Often a real bug (no handler), but also clicks on text and images that look clickable: common and noisy.
      weight: 5,
      journey_edge_decorator: false,
      recommendation:
        'Either wire the element to an action or stop it looking clickable (cursor, underline, button styling); check for handlers that fail silently.',
      detection:
        'A click on an element that looks interactive with no DOM mutation, navigation, request, scroll, selection or focus change within 1000 ms.',
    },
    {
      type: 'navigation_loop',
      // Retracing steps says the visitor is lost, but comparing two pages on purpose looks the same.
      weight: 4,
      journey_edge_decorator: true,
      recommendation:
        'Put the information visitors go back for on the page they return from (pricing next to plans, sizes next to the cart), and make link labels say where they lead.',
      detection: 'The same pages revisited in a cycle (A→B→A→B) within 60 s, SPA history changes included.',
    },
    {
      type: 'form_restart',
      // Clearing and refilling is mild: usually self-corrected, yet it still costs the visitor time.
      weight: 3,
      journey_edge_decorator: false,
      recommendation:
        'Keep what the visitor typed when validation fails or the page re-renders, and accept common formats (spaces in card numbers, +country codes) instead of resetting.',
      detection: 'Fields of a form were cleared or the form reset, then filled again, in the same page view.',
    },
  ].map((d) => Object.freeze(d)),
);

const BY_TYPE: ReadonlyMap<string, SignalDefinition> = new Map(SIGNAL_CATALOG.map((d) => [d.type, d]));

/** Friction points for one occurrence of `type` (integer 0..10); 0 for a type the catalog does not know. */
export function signalWeight(type: string): number {
  return BY_TYPE.get(type)?.weight ?? 0;
}

/** The catalog entry for `type`, or undefined when the type is unknown. */
export function signalDefinition(type: string): SignalDefinition | undefined {
  return BY_TYPE.get(type);
}
