/**
 * Test-only: what every dashboard page must never show, gathered per page: console errors (CSP violations are
 * reported there too), uncaught exceptions, failed requests and HTTP errors; plus axe-core's serious and critical
 * violations, axe injected from its npm file through the DevTools protocol (a page script would break the CSP).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface Watched {
  problems: string[];
  /** Requests the test itself makes fail on purpose (a refused triage): not counted. */
  expectFailure(urlPart: string): void;
}

export function watch(page: Page): Watched {
  const problems: string[] = [];
  const expected: string[] = [];
  const allowed = (url: string) => expected.some((e) => url.includes(e));
  page.on('console', (m) => {
    if (m.type() === 'error' && !allowed(m.location().url ?? '') && !expected.some((e) => m.text().includes(e)))
      problems.push(`console error: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`));
  page.on('requestfailed', (r) => {
    if (!allowed(r.url())) problems.push(`request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400 && !allowed(r.url())) problems.push(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`);
  });
  return { problems, expectFailure: (u) => expected.push(u) };
}

/** Serious and critical accessibility violations of the page as it is now. */
export async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const found = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run(
            o: object,
          ): Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] }>;
        };
      }
    ).axe;
    const r = await axe.run({ resultTypes: ['violations'] });
    return r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map(
        (v) =>
          `${v.impact} ${v.id}: ${v.help} (${v.nodes
            .slice(0, 3)
            .map((n) => n.target.join(' '))
            .join('; ')})`,
      );
  });
  return found;
}
