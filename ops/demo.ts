/**
 * `friction demo`: realistic synthetic SDK traffic against a running instance. Visitors browse a small shop;
 * two elements are broken (a "Pay now" button that does nothing, a signup submit that stays disabled), one page
 * is busy but healthy. Reads the demo credentials written by `friction start`.
 *
 *   friction demo [--sessions 300] [--base-url http://localhost:8080] [--key svc_pub_...]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Config } from '../shared/config.ts';
import { Progress } from './bench/progress.ts';

interface DemoEvent {
  id: string;
  type: 'page_view' | 'signal' | 'conversion';
  ts: string;
  page: string;
  signal?: string;
  selector?: string;
  label?: string;
  x?: number;
  y?: number;
  vx?: number;
  vy?: number;
  value?: number;
}

const rand = (n: number) => Math.floor(Math.random() * n);
const chance = (p: number) => Math.random() < p;

/**
 * Where each element of the demo shop sits in the viewport (fractions): a click lands somewhere on its element, so
 * the element-relative point (x, y) and the viewport point (vx, vy) of one signal agree, and heatmaps show the element.
 */
export const DEMO_ELEMENTS: Record<string, { x: number; y: number; w: number; h: number }> = {
  '#pay-now': { x: 0.4, y: 0.6, w: 0.2, h: 0.08 },
  'form#signup button[type=submit]': { x: 0.35, y: 0.7, w: 0.3, h: 0.07 },
  'form#signup': { x: 0.3, y: 0.3, w: 0.4, h: 0.5 },
  '.product-card img': { x: 0.1, y: 0.25, w: 0.25, h: 0.3 },
  '.hero h1': { x: 0.1, y: 0.1, w: 0.8, h: 0.1 },
};

/** One visitor's journey, as the SDK would report it. */
export function visitorJourney(start: number): DemoEvent[] {
  const events: DemoEvent[] = [];
  let t = start;
  const at = () => new Date((t += 800 + rand(4000))).toISOString();
  const view = (page: string) => events.push({ id: randomUUID(), type: 'page_view', ts: at(), page });
  const signal = (page: string, signal: string, selector: string, label: string) => {
    // Clicks crowd the element's middle: the mean of two uniform draws.
    const x = Math.round((rand(1000) + rand(1000)) / 2);
    const y = Math.round((rand(1000) + rand(1000)) / 2);
    const box = DEMO_ELEMENTS[selector] ?? { x: 0, y: 0, w: 1, h: 1 };
    const vx = Math.round((box.x + (box.w * x) / 1000) * 1000);
    const vy = Math.round((box.y + (box.h * y) / 1000) * 1000);
    events.push({ id: randomUUID(), type: 'signal', ts: at(), page, signal, selector, label, x, y, vx, vy });
  };

  view('/');
  if (chance(0.6)) {
    view('/products');
    if (chance(0.05)) signal('/products', 'dead_click', '.product-card img', 'Product photo');
  }
  if (chance(0.5)) {
    view('/cart');
    view('/checkout');
    // The broken button: most visitors who reach it rage-click or dead-click it.
    if (chance(0.7)) {
      signal('/checkout', 'dead_click', '#pay-now', 'Pay now');
      if (chance(0.6)) for (let i = 0; i < 1 + rand(2); i++) signal('/checkout', 'rage_click', '#pay-now', 'Pay now');
    } else {
      events.push({ id: randomUUID(), type: 'conversion', ts: at(), page: '/checkout', value: 20 + rand(180) });
    }
  }
  if (chance(0.3)) {
    view('/signup');
    if (chance(0.6)) signal('/signup', 'disabled_element_attempt', 'form#signup button[type=submit]', 'Create account');
    if (chance(0.2)) signal('/signup', 'form_abandon', 'form#signup', 'Sign up');
  }
  // The busy, healthy blog: lots of views, rare friction.
  for (let i = 0; i < rand(3); i++) view('/blog');
  if (chance(0.02)) signal('/blog', 'dead_click', '.hero h1', 'Welcome');
  return events;
}

/** Stops the demo with one line (the CLI prints it as `friction: …` and exits 1). */
const stop = (message: string): Error => Object.assign(new Error(message), { name: 'StartupError' });

const why = (err: unknown): string => {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code === 'ECONNREFUSED'
    ? 'connection refused'
    : (cause?.code ?? cause?.message ?? (err as Error).message);
};

/** Options already validated by the CLI (ops/cli.ts). */
export interface DemoOptions {
  sessions: number;
  baseUrl?: string;
  key?: string;
}

const DEVICES = ['desktop', 'desktop', 'mobile', 'tablet'] as const;

/** The `s`-th demo visitor as one SDK batch: a journey that started in the last 20 minutes; devices and sources rotate. */
export function demoBatch(s: number) {
  return {
    session_id: `demo-${randomUUID()}`,
    sent_at: new Date().toISOString(),
    context: {
      device: DEVICES[s % DEVICES.length],
      viewport: { w: 1280, h: 800 },
      source: ['google', 'newsletter', 'direct'][s % 3],
    },
    events: visitorJourney(Date.now() - 20 * 60_000 + rand(15 * 60_000)),
  };
}

export async function runDemo(config: Config, o: DemoOptions): Promise<void> {
  let baseUrl = o.baseUrl;
  let key = o.key;
  if (!baseUrl || !key) {
    const file = join(config.FRICTION_DATA_DIR, 'credentials.json');
    try {
      const creds = JSON.parse(readFileSync(file, 'utf8')) as { base_url: string; publishable_key: string };
      baseUrl ??= creds.base_url;
      key ??= creds.publishable_key;
    } catch {
      throw stop(`no ${file}: start Friction first (npm start), or pass --base-url and --key`);
    }
  }
  const sessions = o.sessions;
  const progress = new Progress('demo traffic', sessions);
  let events = 0;
  let failed = 0;
  for (let s = 0; s < sessions; s++) {
    const body = demoBatch(s);
    const journey = body.events;
    const res = await fetch(`${baseUrl}/v1/ingest`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).catch((err: unknown) => {
      throw stop(`cannot reach ${baseUrl}/v1/ingest (--base-url): ${why(err)}. Is Friction running (npm start)?`);
    });
    if (res.status === 202) events += journey.length;
    else if (res.status === 401 || res.status === 403) {
      const answer = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
      throw stop(
        `${baseUrl} refused the key ${key!.slice(0, 12)}… (--key): ${res.status} ${answer?.error?.message ?? ''}. Use the publishable_key of .friction/credentials.json.`,
      );
    } else failed++;
    progress.update(s + 1, `${events} events`);
  }
  progress.done(`${events} events`);
  process.stdout.write(
    `sent ${sessions - failed} sessions (${events} events)${failed ? `, ${failed} batches refused` : ''} to ${baseUrl}\n`,
  );
  if (failed === sessions) throw stop(`every batch was refused by ${baseUrl}: see its log`);
  if (failed > 0) process.exitCode = 1;
}
