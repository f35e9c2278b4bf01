import { chromium, type Browser } from 'playwright-core';
import type { TestFn } from 'ava';
import { useResource } from '../../../shared/testing/lifecycle.ts';

/** Debian's chromium package (installed by .ci/run); override with CHROMIUM_PATH. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

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
