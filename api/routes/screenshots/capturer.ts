import { existsSync } from 'node:fs';
import type { Kysely } from 'kysely';
import type { Browser } from 'playwright-core';
import type { Logger } from 'pino';
import type { Config } from '../../../shared/config.ts';
import type { Database } from '../../../shared/db/database.ts';
import { OutboundError, pinnedAddress, type OutboundPolicy } from '../../../shared/net/outbound.ts';
import { ownDemoShopPage } from '../../http/demo-shop.ts';
import { captureUrl, quotaDay } from './decide.ts';
import { REFUSED_HEADER, startEgressProxy, type EgressProxy } from './egress-proxy.ts';
import { saveScreenshot, siteUrl, takeQuota, type CaptureResult } from './screenshots.queries.ts';
import { VIEWPORTS, type ScreenshotDevice } from './screenshots.schema.ts';

/**
 * Flags of the one browser: headless, nothing reaching for the network on its own, and every connection through the
 * egress proxy on `proxyPort`. Chromium bypasses a proxy for loopback URLs unless told `<-loopback>`. WebRTC sends
 * UDP (STUN) that no HTTP proxy sees, so its IP handling policy forbids UDP that is not proxied.
 */
export function chromiumArgs(proxyPort: number): string[] {
  return [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    `--proxy-server=http://127.0.0.1:${proxyPort}`,
    '--proxy-bypass-list=<-loopback>',
    '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  ];
}

export interface CapturerOptions {
  db: Kysely<Database>;
  log: Logger;
  policy: OutboundPolicy;
  executablePath: string;
  timeoutMs: number;
  perSiteDay: number;
  /** PUBLIC_BASE_URL: a site URL on this origin under the demo shop's path is the demo shop, rendered locally. */
  publicBaseUrl?: string;
  now?: () => Date;
}

/** Whether captures run: SCREENSHOTS=auto and the Chromium executable exists. */
export function screenshotsEnabled(config: Pick<Config, 'SCREENSHOTS' | 'CHROMIUM_PATH'>): boolean {
  return config.SCREENSHOTS === 'auto' && existsSync(config.CHROMIUM_PATH);
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
  private browser: Promise<{ browser: Browser; proxy: EgressProxy }> | undefined;
  /** Hops the egress proxy refused during the running capture (captures run one at a time). */
  private refusedHops: string[] = [];
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
    const go = new Promise<boolean>((r) => {
      start = r;
    });
    const job = go
      .then(async (ok) => {
        if (!ok) return;
        this.chain = this.chain.then(() => this.capture(siteId, page, device));
        await this.chain;
      })
      .catch((err: unknown) => this.opts.log.warn({ err, siteId, page, device }, 'screenshot capture failed'))
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
    if (b !== undefined)
      await b
        .then(async (x) => {
          await x.browser.close();
          await x.proxy.close();
        })
        .catch(() => {});
  }

  /** The browser and its egress proxy: started together, closed together. */
  private launch(): Promise<{ browser: Browser; proxy: EgressProxy }> {
    if (!this.browser) {
      const p = (async () => {
        const proxy = await startEgressProxy({
          policy: this.opts.policy,
          timeoutMs: this.opts.timeoutMs,
          onRefused: (url, reason) => {
            this.refusedHops.push(url);
            this.opts.log.info({ url, reason }, 'screenshot egress refused');
          },
        });
        try {
          // Loaded on first capture: playwright-core is large, and start-up should not pay for a feature not yet used.
          const { chromium } = await import('playwright-core');
          const browser = await chromium.launch({
            executablePath: this.opts.executablePath,
            args: chromiumArgs(proxy.port),
            headless: true,
          });
          browser.on('disconnected', () => {
            // A crashed browser is relaunched (with a new proxy) by the next capture.
            if (this.browser === p) this.browser = undefined;
            void proxy.close();
          });
          return { browser, proxy };
        } catch (err) {
          await proxy.close();
          throw err;
        }
      })();
      this.browser = p;
      p.catch(() => {
        if (this.browser === p) this.browser = undefined;
      });
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
      const url = captureUrl(base, page);
      // The service's own demo shop is rendered from its code: nothing fetched, so no guard to open for it.
      const demo = ownDemoShopPage(url, this.opts.publicBaseUrl);
      const png = demo === undefined ? await this.render(url, device) : await this.renderHtml(demo, device);
      result = { width: vp.width, height: vp.height, png, failure: null, captured_at: this.now(), source_url: base };
    } catch (err) {
      const reason = err instanceof CaptureFailed ? err.reason : 'render_failed';
      this.opts.log.info({ siteId, page, device, reason, err }, 'screenshot not captured');
      result = {
        width: vp.width,
        height: vp.height,
        png: null,
        failure: reason,
        captured_at: this.now(),
        source_url: base,
      };
    }
    await saveScreenshot(this.opts.db, { site_id: siteId, page, device }, result);
  }

  /** A context of the shared browser with the device's viewport: no service workers, no downloads. */
  private async newContext(device: ScreenshotDevice, extra: { javaScriptEnabled?: boolean } = {}) {
    const vp = VIEWPORTS[device];
    const { browser } = await this.launch();
    return browser.newContext({
      viewport: { width: vp.width, height: vp.height },
      isMobile: vp.isMobile,
      hasTouch: vp.isMobile,
      deviceScaleFactor: 1,
      serviceWorkers: 'block',
      acceptDownloads: false,
      ...extra,
    });
  }

  /** A page given as HTML, in the same browser and viewport; its requests still go through the egress proxy. */
  private async renderHtml(html: string, device: ScreenshotDevice): Promise<Buffer> {
    const context = await this.newContext(device, { javaScriptEnabled: false });
    try {
      const tab = await context.newPage();
      await tab.setContent(html, { waitUntil: 'load', timeout: this.opts.timeoutMs });
      return await tab.screenshot({ type: 'png', timeout: this.opts.timeoutMs });
    } finally {
      await context.close().catch(() => {});
    }
  }

  private async render(url: string, device: ScreenshotDevice): Promise<Buffer> {
    const { policy, timeoutMs } = this.opts;
    try {
      await pinnedAddress(new URL(url), policy);
    } catch (err) {
      if (err instanceof OutboundError && err.kind === 'refused') throw new CaptureFailed('refused', err.message);
      throw new CaptureFailed('render_failed', (err as Error).message);
    }
    this.refusedHops = [];
    const context = await this.newContext(device);
    let deadline: NodeJS.Timeout | undefined;
    try {
      // NOTE: no `context.route` or address backstop any more: every connection of the browser goes through the egress
      // proxy, which checks each hop (redirects included, which `route` never saw) and pins it to the checked address;
      // `serverAddr()` would only ever report the proxy's loopback address.
      const tab = await context.newPage();
      const work = (async () => {
        const resp = await tab.goto(url, { waitUntil: 'load', timeout: timeoutMs }).catch((err: unknown) => {
          // A refused CONNECT (an https hop of the main frame) fails the navigation with a tunnel error.
          if (this.refusedHops.length > 0 && /ERR_TUNNEL_CONNECTION_FAILED/.test((err as Error).message)) {
            throw new CaptureFailed('refused', `the page led to a forbidden address: ${this.refusedHops[0]}`);
          }
          throw err;
        });
        if (!resp) throw new CaptureFailed('render_failed', 'no response');
        // A refused plain-http hop of the main frame is answered by the proxy itself, with the marker only it can set.
        if (resp.headers()[REFUSED_HEADER] === 'refused') {
          throw new CaptureFailed('refused', `the page led to a forbidden address: ${resp.url()}`);
        }
        if (resp.status() >= 400) throw new CaptureFailed('render_failed', `HTTP ${resp.status()}`);
        return await tab.screenshot({ type: 'png', timeout: timeoutMs });
      })();
      const timeout = new Promise<never>((_, reject) => {
        deadline = setTimeout(
          () => reject(new CaptureFailed('render_failed', `timed out after ${timeoutMs} ms`)),
          timeoutMs,
        );
      });
      work.catch(() => {});
      return await Promise.race([work, timeout]);
    } finally {
      clearTimeout(deadline);
      await context.close().catch(() => {});
    }
  }
}
