/**
 * OpenAPI for clients (issue 12, item 5): the served document passes Redocly's recommended rules with no error,
 * a TypeScript client generated from it (openapi-typescript) type-checks code that reads typed answers, and
 * /docs renders it with a locally served Scalar bundle.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import openapiTS, { astToString } from 'openapi-typescript';
import test from 'ava';
import { startTestStack, type TestStack } from '../testing/stack.ts';
import { typeScriptProject } from '../../shared/testing/packages.ts';

let stack: TestStack;
let source: string;
let work: string;

test.before(async () => {
  stack = await startTestStack({ processor: false });
  source = await (await fetch(`${stack.baseUrl}/v1/openapi.json`)).text();
  work = mkdtempSync(path.join(tmpdir(), 'friction-openapi-'));
});
test.after.always(async () => {
  await stack?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

test("the document passes Redocly's recommended rules with no error", async (t) => {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({ source, absoluteRef: path.join(work, 'openapi.json'), config });
  const errors = problems.filter((p) => p.severity === 'error');
  const warnings = problems.filter((p) => p.severity === 'warn');
  const count = (list: typeof problems) =>
    Object.entries(list.reduce<Record<string, number>>((m, p) => ((m[p.ruleId] = (m[p.ruleId] ?? 0) + 1), m), {}))
      .map(([r, n]) => `${r} ×${n}`)
      .join(', ');
  t.log(`errors: ${errors.length}; warnings: ${warnings.length} (${count(warnings) || 'none'})`);
  t.deepEqual(
    errors.map((e) => `${e.ruleId}: ${e.message} at ${e.location[0]?.pointer}`),
    [],
  );
  const doc = JSON.parse(source) as {
    info: { license?: { name: string } };
    servers?: unknown[];
    components: { schemas: Record<string, unknown> };
  };
  t.is(doc.info.license?.name, 'Apache-2.0');
  t.true((doc.servers ?? []).length > 0);
  for (const name of [
    'Error',
    'PageScore',
    'SiteScores',
    'Issue',
    'IssueDetail',
    'Element',
    'Alert',
    'Page',
    'Recommendation',
  ])
    t.truthy(doc.components.schemas[name], `component ${name}`);
});

test('a client generated with openapi-typescript type-checks typed reads of scores, issues, elements, alerts, pages and sessions', async (t) => {
  const types = astToString(await openapiTS(source));
  writeFileSync(path.join(work, 'friction-api.d.ts'), types);
  const check = typeScriptProject(work, { name: 'client', target: 'es2022', files: ['client.ts', 'wrong.ts'] });
  const client = (extra: string) =>
    [
      "import type { paths, components } from './friction-api.d.ts';",
      "type Ok<P extends keyof paths, S extends number = 200> = paths[P]['get'] extends { responses: infer R } ? R extends Record<S, { content: { 'application/json': { data: infer D } } }> ? D : never : never;",
      "type Scores = Ok<'/v1/query/scores'>;",
      "type Issues = Ok<'/v1/query/issues'>;",
      'declare const scores: Scores;',
      'declare const issues: Issues;',
      "declare const elements: Ok<'/v1/query/elements'>;",
      "declare const alerts: Ok<'/v1/query/alerts'>;",
      "declare const page: Ok<'/v1/query/page'>;",
      "declare const session: Ok<'/v1/query/session'>;",
      'const friction: number = elements.elements[0].friction_score;',
      "const alertStatus: 'fired' | 'acknowledged' | 'investigating' | 'resolved' = alerts.alerts[0].status;",
      'const exceeded: boolean = page.budget.exceeded;',
      "const firstEvent: 'signal' | 'page_view' = session.events[0].type;",
      'const overall: number = scores.overall_score;',
      "const trend: 'up' | 'down' | 'stable' = scores.pages[0].trend;",
      'const count: number = issues.issues[0].signal_count;',
      "const status: components['schemas']['Issue']['status'] = issues.issues[0].status;",
      "type Err = components['schemas']['Error']['error'];",
      'declare const e: Err;',
      'const code: string = e.code;',
      'export { overall, trend, count, status, code, friction, alertStatus, exceeded, firstEvent };',
      extra,
    ].join('\n');
  writeFileSync(path.join(work, 'client.ts'), client(''));
  writeFileSync(path.join(work, 'wrong.ts'), client('const wrong: string = scores.overall_score; export { wrong };'));
  const errors = await check();
  t.deepEqual(
    errors.split('\n').filter((l) => /error TS/.test(l) && !l.startsWith('wrong.ts(')),
    [],
    'typed reads compile',
  );
  t.regex(errors, /wrong\.ts\(\d+,\d+\): error TS2322/, 'a score is a number, not unknown: misuse does not compile');
});

test('/docs renders the document with Scalar served by Friction itself (no CDN)', async (t) => {
  const page = await fetch(`${stack.baseUrl}/docs`);
  t.is(page.status, 200);
  t.regex(page.headers.get('content-type') ?? '', /text\/html/);
  const html = await page.text();
  t.regex(html, /src="\/docs\/scalar\.js"/);
  t.regex(html, /"url":"\/v1\/openapi\.json"/);
  t.notRegex(html, /https?:\/\//, 'nothing loaded from another origin');
  const js = await fetch(`${stack.baseUrl}/docs/scalar.js`);
  t.is(js.status, 200);
  t.true((await js.text()).includes('createApiReference'));
});
