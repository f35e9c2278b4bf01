import { now } from '../clock.ts';
import { DISABLED_REPEAT_MS } from '../constants.ts';
import { signal } from '../core.ts';
import { disabledFor } from '../interactive.ts';

let last: { el: Element; t: number } | null = null;

/**
 * A press on a disabled control. Browsers never dispatch click to a disabled form control, so this
 * listens to pointerdown, which they do dispatch. A control made unclickable with `pointer-events:
 * none` (Bootstrap) is found under the pointer from its parent's press (see disabledFor). Repeats on
 * the same element within DISABLED_REPEAT_MS are one attempt.
 */
export const disabledPress = (e: PointerEvent, target: Element): void => {
  if (e.button !== 0) return;
  const el = disabledFor(target, e);
  if (!el) return;
  const t = now();
  const repeat = last?.el === el && t - last.t < DISABLED_REPEAT_MS;
  last = { el, t };
  if (repeat) return;
  const how = el.closest('fieldset:disabled')
    ? 'fieldset'
    : el.matches(':disabled')
      ? 'disabled'
      : el.matches('[aria-disabled=true]')
        ? 'aria-disabled'
        : 'class';
  signal('disabled_element_attempt', { el, point: e, meta: { how } });
};
