/** The user's latest actions, shared by the detectors that ask "did this follow something the user did?". */
export const actions = {
  /** Bumped on every trusted press and Enter/Space: error states are counted once per action. */
  seq: 0,
  /** When that action happened (clock.now()). */
  at: -Infinity,
  /** The last trusted press or click and the element it meant, for attributing an exception to it. */
  click: null as { el: Element; t: number } | null,
  /** The last submit attempt (click on a submit control, Enter in a form field): native validation follows it. */
  submitAt: -Infinity,
  /** The last trusted press, where a click's pointer went down (a click far from it ends a drag). */
  down: null as PointerEvent | null,
  /**
   * The last error shown to the user or thrown (an error_encounter): a form cleared after it was not sent
   * successfully. 0 (not -Infinity) so that a form never sent (sentAt 0) is not "sent before any error".
   */
  errorAt: 0,
};
