import { existsSync } from 'node:fs';
import type { Kysely } from 'kysely';
import type { Browser } from 'playwright-core';
import type { Logger } from 'pino';
import type { Config } from '../../../shared/config.ts';
import type { Database } from '../../../shared/db/database.ts';
import { classifyAddress, mayConnect } from '../../../shared/net/address-class.ts';
import { OutboundError, pinnedAddress, type OutboundPolicy } from '../../../shared/net/outbound.ts';
import { captureUrl, quotaDay } from './decide.ts';
import { saveScreenshot, siteUrl, takeQuota, type CaptureResult } from './screenshots.queries.ts';
import { VIEWPORTS, type ScreenshotDevice } from './screenshots.schema.ts';

/** Flags of the one browser: headless, and nothing reaching for the network on its own. */
export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

export interface CapturerOptions {
  db: Kysely<Database>;
  log: Logger;
  policy: OutboundPolicy;
  executablePath: string;
  timeoutMs: number;
  perSiteDay: number;
  now?: () => Date;
}

/** Whether captures run: SCREENSHOTS=auto and the Chromium executable exists. */
export function screenshotsEnabled(config: Pick<Config, 'SCREENSHOTS' | 'CHROMIUM_PATH'>): boolean {
  return config.SCREENSHOTS === 'auto' && existsSync(config.CHROMIUM_PATH);
}

/** May the browser fetch this URL? http(s) to an allowed address (resolved now), data: and blob:; nothing else. */
export async function subrequestAllowed(raw: string, policy: OutboundPolicy): Promise<boolean> {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return false;
  }
  if (u.protocol === 'data:' || u.protocol === 'blob:') return true;
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return false;
  try {
    await pinnedAddress(u, policy);
    return true;
  } catch {
    return false;
  }
}

class CaptureFailed extends Error {
  readonly reason: 'refused' | 'render_failed';
  constructor(reason: 'refused' | 'render_failed', message: string) {
    super(message);
    this.reason = reason;
  }
}

/**
 * Background captures in one reused headless Chromium (launched on first use, closed by `close`). Requests only
 * queue: `enqueue` answers at once, deduplicates a (site, page, device) already queued or running, takes one
 * capture from the site's daily quota, and runs captures one at a time (the machine's CPU is the API's too).
 */
export class ScreenshotCapturer {
  private readonly opts: CapturerOptions;
  private readonly now: () => Date;
  private browser: Promise<Browser> | undefined;
  private readonly pending = new Map<string, Promise<void>>();
  private chain: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(opts: CapturerOptions) {
    this.opts = opts;
    this.now = opts.now ?? (() => new Date());
  }

  /** Queues a capture; `limit_reached` when the site used its captures of the day. Never waits for the capture. */
  async enqueue(siteId: string, page: string, device: ScreenshotDevice): Promise<'capturing' | 'limit_reached'> {
    const key = JSON.stringify([siteId, page, device]);
    if (this.pending.has(key) || this.closed) return 'capturing';
    // Reserved before the first await, so concurrent requests for the same capture queue it once.
    let start!: (go: boolean) => void;
    const go = new Promise<boolean>((r) => { start = r; });
    const job = go.then(async (ok) => {
      if (!ok) return;
      this.chain = this.chain.then(() => this.capture(siteId, page, device));
      await this.chain;
    }).catch((err: unknown) => this.opts.log.warn({ err, siteId, page, device }, 'screenshot capture failed'))
      .finally(() => this.pending.delete(key));
    this.pending.set(key, job);
    let ok = false;
    try {
      ok = await takeQuota(this.opts.db, siteId, quotaDay(this.now()), this.opts.perSiteDay);
    } finally {
      start(ok);
    }
    return ok ? 'capturing' : 'limit_reached';
  }

  /** Resolves when every queued capture has finished (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending.values()]);
  }

  /** Lets running captures finish (each has its deadline), then closes the browser. */
  async close(): Promise<void> {
    this.closed = true;
    await this.idle();
    const b = this.browser;
    this.browser = undefined;
    if (b) await b.then((x) => x.close()).catch(() => {});
  }

  private launch(): Promise<Browser> {
    if (!this.browser) {
      // Loaded on first capture: playwright-core is large, and start-up should not pay for a feature not yet used.
      const p = import('playwright-core').then(({ chromium }) => chromium.launch({ executablePath: this.opts.executablePath, args: CHROMIUM_ARGS, headless: true }));
      this.browser = p;
      // A crashed or failed browser is relaunched by the next capture.
      p.then((b) => b.on('disconnected', () => { if (this.browser === p) this.browser = undefined; }), () => { if (this.browser === p) this.browser = undefined; });
    }
    return this.browser;
  }

  private async capture(siteId: string, page: string, device: ScreenshotDevice): Promise<void> {
    if (this.closed) return; // shutting down: queued captures that have not started are dropped
    const base = await siteUrl(this.opts.db, siteId);
    if (base === undefined) return; // the site was deleted meanwhile
    const vp = VIEWPORTS[device];
    let result: CaptureResult;
    try {
      const png = await this.render(captureUrl(base, page), device);
      result = { width: vp.width, height: vp.height, png, failure: null, captured_at: this.now() };
    } catch (err) {
      const reason = err instanceof CaptureFailed ? err.reason : 'render_failed';
      this.opts.log.info({ siteId, page, device, reason, err: (err as Error).message }, 'screenshot not captured');
      result = { width: vp.width, height: vp.height, png: null, failure: reason, captured_at: this.now() };
    }
    await saveScreenshot(this.opts.db, siteId, page, device, result);
  }

  private async render(url: string, device: ScreenshotDevice): Promise<Buffer> {
    const { policy, timeoutMs } = this.opts;
    try {
      await pinnedAddress(new URL(url), policy);
    } catch (err) {
      if (err instanceof OutboundError && err.kind === 'refused') throw new CaptureFailed('refused', err.message);
      throw new CaptureFailed('render_failed', (err as Error).message);
    }
    const vp = VIEWPORTS[device];
    const browser = await this.launch();
    const context = await browser.newContext({
      viewport: { width: vp.width, height: vp.height }, isMobile: vp.isMobile, hasTouch: vp.isMobile, deviceScaleFactor: 1,
      serviceWorkers: 'block', acceptDownloads: false,
    });
    let deadline: NodeJS.Timeout | undefined;
    try {
      let forbidden: string | undefined;
      // Every request of the page (navigations, redirects, sub-resources) is checked before Chromium sends it.
      await context.route('**/*', async (route) => {
        const reqUrl = route.request().url();
        if (await subrequestAllowed(reqUrl, policy)) return route.continue();
        if (route.request().isNavigationRequest() && route.request().frame() === tab.mainFrame()) forbidden = reqUrl;
        return route.abort('blockedbyclient');
      });
      // WebSockets bypass `route`: each is checked the same way (ws: as http:, wss: as https:) or closed unconnected.
      await context.routeWebSocket(/.*/, async (ws) => {
        if (await subrequestAllowed(ws.url().replace(/^ws/, 'http'), policy)) ws.connectToServer();
        else await ws.close({ code: 1008, reason: 'forbidden address' });
      });
      const tab = await context.newPage();
      // Backstop for DNS answers that changed between the check and Chromium's own lookup: the address Chromium
      // actually connected to must be allowed too, or the capture is discarded.
      const addrChecks: Promise<void>[] = [];
      tab.on('response', (r) => {
        addrChecks.push(r.serverAddr().then((a) => {
          if (a && !mayConnect(classifyAddress(a.ipAddress), policy.allowPrivateNetworks)) forbidden ??= r.url();
        }, () => {}));
      });
      const work = (async () => {
        const resp = await tab.goto(url, { waitUntil: 'load', timeout: timeoutMs }).catch((err: unknown) => {
          // A main-frame navigation (or redirect) we aborted fails the goto: that is a refusal, not a render failure.
          if (forbidden) throw new CaptureFailed('refused', `the page led to a forbidden address: ${forbidden}`);
          throw err;
        });
        if (forbidden) throw new CaptureFailed('refused', `the page reached a forbidden address: ${forbidden}`);
        if (!resp) throw new CaptureFailed('render_failed', 'no response');
        if (resp.status() >= 400) throw new CaptureFailed('render_failed', `HTTP ${resp.status()}`);
        const png = await tab.screenshot({ type: 'png', timeout: timeoutMs });
        await Promise.all(addrChecks);
        if (forbidden) throw new CaptureFailed('refused', `the page reached a forbidden address: ${forbidden}`);
        return png;
      })();
      const timeout = new Promise<never>((_, reject) => {
        // A page that already led to a forbidden address is refused, however long the rest of it would have taken.
        deadline = setTimeout(() => reject(forbidden
          ? new CaptureFailed('refused', `the page led to a forbidden address: ${forbidden}`)
          : new CaptureFailed('render_failed', `timed out after ${timeoutMs} ms`)), timeoutMs);
      });
      work.catch(() => {});
      return await Promise.race([work, timeout]);
    } finally {
      clearTimeout(deadline);
      await context.close().catch(() => {});
    }
  }
}
