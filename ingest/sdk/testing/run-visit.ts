/**
 * Runs one scripted visit in a fresh browser context (a new visitor: new session, own publishable
 * key) and returns everything the SDK sent for it. Shared by the detection test and the bench.
 */
import { randomUUID } from 'node:crypto';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import type { IngestBatch } from '../../../shared/contracts/ingest.ts';
import { SITE_CONFIG, type Device, type Scenario } from '../fixtures/scenarios.ts';
import { startCapture, type Capture } from './capture-server.ts';
import { sdkCookie, startFixtures, type Fixtures } from './fixture-server.ts';
import { buildSdk } from '../build.ts';
import { launchChromium } from './browser.ts';
import { Visitor } from './visitor.ts';
import { seeded } from '../../../shared/seeded-random.ts';

export type SentEvent = IngestBatch['events'][number];

export interface SdkStats {
  sampled: boolean;
  queued: number;
  inflight: boolean;
  pending: number;
  sent: number;
  batches: number;
  dropped: number;
  rejected: number;
  retries: number;
  errors: number;
  lastError: unknown;
}

export interface VisitResult {
  key: string;
  events: SentEvent[];
  signals: SentEvent[];
  /** Uncaught errors in any page of the visit, the host's own included. */
  pageErrors: string[];
  /** SDK stats on the last page, once settled. */
  stats: SdkStats;
  visitor: Visitor;
}

export interface Env {
  browser: Browser;
  fixtures: Fixtures;
  capture: Capture;
}

/** One browser, the fixture site serving a fresh SDK build, and a capture server: what a browser test file needs. */
export async function startEnv(): Promise<Env> {
  const sdk = await buildSdk();
  const [capture, fixtures, browser] = await Promise.all([startCapture(), startFixtures(sdk), launchChromium()]);
  return { capture, fixtures, browser };
}

export async function closeEnv(env: Env | undefined): Promise<void> {
  await env?.browser.close();
  await env?.fixtures.close();
  await env?.capture.close();
}

export const newKey = (): string => `svc_pub_test_${randomUUID().replace(/-/g, '').slice(0, 16)}`;

/** Opens a context whose pages load the SDK with `key` and `config`. */
export async function openContext(
  env: Env,
  key: string,
  config: Record<string, unknown>,
  esm = false,
  options: BrowserContextOptions = { viewport: { width: 1280, height: 720 } },
): Promise<BrowserContext> {
  const context = await env.browser.newContext(options);
  await context.addCookies([
    { name: 'friction', value: sdkCookie({ key, endpoint: env.capture.url, config, esm }), url: env.fixtures.url },
  ]);
  return context;
}

/**
 * Waits until the SDK has nothing left to decide or send: no detection window open, queue empty,
 * no batch in flight. Polls stats() and flushes, instead of sleeping for a guessed time.
 */
export async function settle(page: Page, timeout = 20_000): Promise<SdkStats> {
  const handle = await page.waitForFunction(
    () => {
      const F = (window as unknown as { Friction: { stats(): SdkStats; flush(): void } }).Friction;
      const s = F.stats();
      if (!s.pending && s.queued && !s.inflight) F.flush();
      return !s.pending && !s.queued && !s.inflight && s;
    },
    undefined,
    { polling: 50, timeout },
  );
  return (await handle.jsonValue()) as SdkStats;
}

/** Browser context options per device: phone and tablet are touch devices with mobile viewports. */
export const DEVICES: Record<Device, BrowserContextOptions> = {
  desktop: { viewport: { width: 1280, height: 720 } },
  phone: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 3 },
  tablet: { viewport: { width: 820, height: 1180 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 },
};

export interface VisitOptions {
  /** Seeds the visitor's jitter (where in an element it clicks, pauses between clicks, typing speed). */
  seed: number;
  /** Short by default so visits end quickly; the transport tests cover the real default. */
  flushInterval?: number;
  viewport?: { width: number; height: number };
  /** The device to visit with, unless the scenario names its own; desktop by default. */
  device?: Device;
}

export async function visit(env: Env, scenario: Scenario, o: VisitOptions): Promise<VisitResult> {
  const key = newKey();
  const device = DEVICES[scenario.device ?? o.device ?? 'desktop'];
  const context = await openContext(env, key, { ...SITE_CONFIG, flushInterval: o.flushInterval ?? 250 }, false, {
    ...device,
    viewport: (!scenario.device && o.viewport) || device.viewport,
  });
  const pageErrors: string[] = [];
  // Every page of the context counts, a tab the visit opened as much as the first one.
  let loads = 0;
  const watch = (p: Page): void => {
    p.on('pageerror', (e) => pageErrors.push(e.message));
    p.on('load', () => loads++);
  };
  context.on('page', watch);
  try {
    const page = await context.newPage();
    const v = new Visitor(page, env.fixtures.url, seeded(o.seed));
    await v.goto(scenario.start);
    await scenario.run(v);
    // Other tabs settle first, so their batches are sent before the context closes.
    for (const other of context.pages()) if (other !== page) await settle(other);
    const stats = await settle(page);
    // Earlier pages sent their last events by beacon at pagehide; wait until each page's page_view is in.
    await env.capture.waitFor(
      () => env.capture.events(key).filter((e) => e.type === 'page_view' && !e.meta?.spa).length >= loads,
      10_000,
      `${loads} page views for "${scenario.name}"`,
    );
    const events = env.capture.events(key);
    return { key, events, signals: events.filter((e) => e.type === 'signal'), pageErrors, stats, visitor: v };
  } finally {
    await context.close();
  }
}
