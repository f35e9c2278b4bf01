import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import type { TestFn } from 'ava';
import { useResource } from '../../../shared/testing/lifecycle.ts';

/**
 * Debian's chromium-headless-shell (installed by .ci/run beside chromium): the same Chromium release, Blink and V8
 * built without the desktop browser around them, the build Playwright itself runs headless tests in. It takes about a
 * quarter of the full browser's CPU for the same visits (the detection suite's Chromium processes: 58 s → 13 s).
 * Debian's chromium when the shell is not installed; override with CHROMIUM_PATH.
 */
const HEADLESS_SHELL = '/usr/bin/chromium-headless-shell';
export const CHROMIUM_PATH =
  process.env.CHROMIUM_PATH || (existsSync(HEADLESS_SHELL) ? HEADLESS_SHELL : '/usr/bin/chromium');

/** Headless Chromium with nothing reaching for the (closed) network on its own. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
}

/** The Chromium the tests of a file share: launched before them, closed after them. */
export function useChromium<C>(test: TestFn<C>): Browser {
  return useResource(test, launchChromium, (browser) => browser.close());
}
