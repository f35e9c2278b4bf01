/**
 * A scripted visitor: real, trusted input through Playwright (mouse and keyboard go through
 * Chromium's input pipeline, as a person's would), with seeded jitter so the bench can vary where
 * and how fast people click.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'playwright-core';

/** Where a click landed, recorded so tests can check the SDK's coordinates against it. */
export interface ClickRecord {
  /** Viewport position of the pointer. */
  cx: number;
  cy: number;
  /** The element's box at click time, in viewport px. */
  box: { x: number; y: number; width: number; height: number };
  scrollX: number;
  scrollY: number;
  docW: number;
  docH: number;
  vw: number;
  vh: number;
}

/** How long a finger rests on the glass in a tap, and a key stays down in a press. */
const TAP_HOLD_MS = 40;
const KEY_HOLD_MS = 30;

export interface ClickOptions {
  /** Fraction of the element's width/height to click at; random in 0.2..0.8 when omitted. */
  rx?: number;
  ry?: number;
  times?: number;
  /** Pause between repeated clicks, ms: [min, max]. */
  gap?: [number, number];
  /** Pixels of wobble between repeated clicks. */
  wobble?: number;
}

export class Visitor {
  readonly page: Page;
  readonly base: string;
  readonly rand: () => number;
  /** First click on each selector. */
  readonly clicks = new Map<string, ClickRecord>();

  readonly sdk: boolean;

  constructor(page: Page, base: string, rand: () => number, sdk = true) {
    this.page = page;
    this.base = base;
    this.rand = rand;
    this.sdk = sdk;
  }

  between(min: number, max: number): number {
    return min + (max - min) * this.rand();
  }

  /** Waits until the page has loaded and, when it has the SDK, the SDK has initialized. */
  async ready(): Promise<void> {
    await this.page.waitForFunction((sdk) => {
      const f = (window as unknown as { Friction?: { stats(): unknown } }).Friction;
      return document.readyState === 'complete' && (!sdk || !!(f && f.stats()));
    }, this.sdk);
  }

  async goto(path: string): Promise<void> {
    await this.page.goto(this.base + path);
    await this.ready();
  }

  /** Two animation frames: scroll events from the last scroll have been dispatched by then. */
  async frames(): Promise<void> {
    await this.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  }

  async pause(min: number, max: number): Promise<void> {
    await this.page.waitForTimeout(this.between(min, max));
  }

  /**
   * Waits until `from` (a Date.now() taken when the previous input started) plus a pause in min..max ms. A
   * repeated input is paced from when the previous one started, not from when its dispatch returned, so a busy
   * machine's slow round trips to the browser do not add to the pauses the page sees.
   */
  async pauseFrom(from: number, min: number, max: number): Promise<void> {
    const ms = from + this.between(min, max) - Date.now();
    if (ms > 0) await sleep(ms);
  }

  async target(selector: string, rx?: number, ry?: number): Promise<ClickRecord> {
    const loc = this.page.locator(selector).first();
    await loc.scrollIntoViewIfNeeded();
    await this.frames();
    const box = await loc.boundingBox();
    if (!box) throw new Error(`${selector} has no box`);
    const fx = rx ?? this.between(0.2, 0.8);
    const fy = ry ?? this.between(0.25, 0.75);
    const geo = await this.page.evaluate(() => ({
      scrollX,
      scrollY,
      docW: Math.max(document.documentElement.scrollWidth, innerWidth),
      docH: Math.max(document.documentElement.scrollHeight, innerHeight),
      vw: innerWidth,
      vh: innerHeight,
    }));
    return { cx: box.x + box.width * fx, cy: box.y + box.height * fy, box, ...geo };
  }

  /** Clicks `selector` (once or `times` times) at a point inside it, with human-like pauses. */
  async click(selector: string, o: ClickOptions = {}): Promise<ClickRecord> {
    const rec = await this.target(selector, o.rx, o.ry);
    if (!this.clicks.has(selector)) this.clicks.set(selector, rec);
    const times = o.times ?? 1;
    const [gmin, gmax] = o.gap ?? [80, 250];
    for (let i = 0; i < times; i++) {
      const w = i && o.wobble ? o.wobble : 0;
      const started = Date.now();
      await this.page.mouse.click(rec.cx + this.between(-w, w), rec.cy + this.between(-w, w));
      if (i < times - 1) await this.pauseFrom(started, gmin, gmax);
    }
    return rec;
  }

  /** A double or triple click, as the OS reports it (click detail 1, 2, 3). */
  async multiClick(selector: string, count: 2 | 3): Promise<void> {
    const rec = await this.target(selector);
    await this.page.mouse.click(rec.cx, rec.cy, { clickCount: count, delay: 20 });
  }

  /**
   * Sends CDP input events, `[ms after the first, method, params]`, all at once, each stamped with the time the
   * person made it (`timestamp`) so that the last was made just now and the others the given times before it. This
   * is how a device's input reaches a page whose main thread was busy: queued in order with the times it was made.
   * Chromium counts taps from these times (a double-tap is click detail 1 then 2), and nothing is left to a busy
   * machine's timers and round trips, which could otherwise spread a burst of taps by more than a second, or turn a
   * double-tap into two single taps (both seen under load).
   */
  private async input(events: [number, string, Record<string, unknown>][]): Promise<void> {
    const cdp = await this.page.context().newCDPSession(this.page);
    try {
      // The person takes that long: none of the times is from before the call (or the page).
      await sleep(events[events.length - 1][0]);
      const first = Date.now() - events[events.length - 1][0];
      await Promise.all(
        events.map(([ms, method, params]) =>
          cdp.send(method as 'Input.dispatchTouchEvent', { ...params, timestamp: (first + ms) / 1000 } as never),
        ),
      );
    } finally {
      await cdp.detach();
    }
  }

  /**
   * Taps `selector` with a finger: touchStart and touchEnd through CDP (Input.dispatchTouchEvent), which Chromium
   * turns into pointer, mouse and click events as it does for a real touch screen. `gaps` are the pauses after
   * each tap but the last, ms.
   */
  async tap(selector: string, gaps: number[] = []): Promise<ClickRecord> {
    const rec = await this.target(selector);
    if (!this.clicks.has(selector)) this.clicks.set(selector, rec);
    const plan: [number, string, Record<string, unknown>][] = [];
    let at = 0;
    for (let i = 0; i <= gaps.length; i++) {
      const x = rec.cx + this.between(-2, 2);
      plan.push([at, 'Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x, y: rec.cy }] }]);
      plan.push([at + TAP_HOLD_MS, 'Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] }]);
      at += TAP_HOLD_MS + (gaps[i] ?? 0);
    }
    await this.input(plan);
    return rec;
  }

  /** Presses Enter on the focused `selector`, `times` times, with pauses between, sent as tap's touches are. */
  async pressEnter(selector: string, times = 1, gap: [number, number] = [120, 300]): Promise<void> {
    await this.page.focus(selector);
    const key = { key: 'Enter', code: 'Enter', windowsVirtualKeyCode: 13, nativeVirtualKeyCode: 13 };
    const plan: [number, string, Record<string, unknown>][] = [];
    let at = 0;
    for (let i = 0; i < times; i++) {
      plan.push([at, 'Input.dispatchKeyEvent', { type: 'keyDown', text: '\r', unmodifiedText: '\r', ...key }]);
      plan.push([at + KEY_HOLD_MS, 'Input.dispatchKeyEvent', { type: 'keyUp', ...key }]);
      at += KEY_HOLD_MS + this.between(gap[0], gap[1]);
    }
    await this.input(plan);
  }

  /** Drags `from` with the mouse and drops it on `to`, moving in steps as a hand does. */
  async drag(from: string, to: string): Promise<void> {
    const a = await this.target(from);
    const b = await this.target(to);
    await this.page.mouse.move(a.cx, a.cy);
    await this.page.mouse.down();
    await this.page.mouse.move(b.cx, b.cy, { steps: 12 });
    await this.page.mouse.up();
  }

  /** Clicks a link (or submit button) and waits for the next page's SDK. */
  async follow(selector: string, o: ClickOptions = {}): Promise<void> {
    await Promise.all([this.page.waitForEvent('load'), this.click(selector, o)]);
    await this.ready();
  }

  async type(selector: string, text: string): Promise<void> {
    await this.click(selector);
    await this.page.keyboard.type(text, { delay: this.between(5, 25) });
  }

  async reload(): Promise<void> {
    await this.page.reload();
    await this.ready();
  }

  async back(): Promise<void> {
    await this.page.goBack();
    await this.ready();
  }

  async forward(): Promise<void> {
    await this.page.goForward();
    await this.ready();
  }
}
