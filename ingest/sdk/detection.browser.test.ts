/**
 * Phase 1 of the SDK's end-to-end tests: the built script-tag SDK in real headless Chromium on the
 * fixture site, every scenario of fixtures/scenarios.ts visited by a scripted visitor, and what
 * the SDK sent (to a capture server that answers like ingest) compared with the labels.
 */
import test from 'ava';
import { build } from 'esbuild';
import { IngestBatchSchema } from '../../shared/contracts/ingest.ts';
import { HARDER_SCENARIOS } from './fixtures/harder-scenarios.ts';
import { SCENARIOS, SITE_CONFIG, TYPED_SECRETS } from './fixtures/scenarios.ts';
import { judge, describeExpected, describeSignals } from './testing/expect.ts';
import { limiter } from './testing/limit.ts';
import { closeEnv, newKey, openContext, settle, startEnv, visit, type Env } from './testing/run-visit.ts';
import { Visitor } from './testing/visitor.ts';
import { seeded } from '../../shared/seeded-random.ts';

let env: Env;
const run = limiter(4);

test.before(async () => {
  env = await startEnv();
});

test.after.always(() => closeEnv(env));

for (const [i, scenario] of [...SCENARIOS, ...HARDER_SCENARIOS].entries()) {
  test(`${scenario.friction ? 'friction' : 'non-friction'}: ${scenario.name}`, async (t) => {
    const r = await run(() => visit(env, scenario, { seed: 1000 + i }));

    t.deepEqual(
      env.capture.invalid.filter((x) => x.key === r.key).map((x) => x.issues),
      [],
      'every batch matches IngestBatchSchema',
    );
    t.is(r.stats.errors, 0, `no error inside the SDK (last: ${String(r.stats.lastError)})`);
    t.deepEqual(
      r.pageErrors.filter((m) => !scenario.hostErrors?.test(m)),
      [],
      "no page error other than the page's own",
    );
    if (scenario.hostErrors)
      t.true(
        r.pageErrors.some((m) => scenario.hostErrors!.test(m)),
        'the page did throw its own error',
      );

    const j = judge(scenario, r.signals, r.visitor.clicks);
    t.deepEqual(
      j.missing.map(describeExpected),
      [],
      `expected signals were detected (sent: ${describeSignals(r.signals)})`,
    );
    t.deepEqual(describeSignals(j.unexpected), 'none', 'no signal beyond the expected ones');
    for (const f of j.found) t.deepEqual(f.problems, [], `${describeExpected(f.expected)} details`);

    // Heatmap coordinates: every click-based signal carries all six, as integers 0..1000.
    for (const e of r.signals.filter((s) => /click|disabled/.test(s.signal ?? ''))) {
      for (const k of ['x', 'y', 'vx', 'vy', 'px', 'py'] as const)
        t.true(Number.isInteger(e[k]) && e[k]! >= 0 && e[k]! <= 1000, `${e.signal}.${k}=${e[k]}`);
    }

    const batches = env.capture.accepted(r.key);
    t.is(new Set(batches.map((b) => b.session_id)).size, scenario.tabs ?? 1, 'one session per tab for the whole visit');
    t.true(
      batches.every((b) => b.batch_id),
      'every batch carries a batch_id',
    );
    const wire = JSON.stringify(env.capture.received.filter((x) => x.key === r.key).map((x) => x.raw));
    for (const s of TYPED_SECRETS) t.false(wire.includes(s), `typed text "${s}" never leaves the page`);

    if (scenario.pageViews)
      t.deepEqual(
        r.events.filter((e) => e.type === 'page_view').map((e) => e.page),
        scenario.pageViews,
        'page views: hash routes are pages, anchors are not',
      );

    if (scenario.conversion) {
      const c = r.events.find((e) => e.type === 'conversion');
      t.like(c, scenario.conversion, 'the conversion from config was recorded');
    } else {
      t.false(
        r.events.some((e) => e.type === 'conversion'),
        'no conversion',
      );
    }
  });
}

test('the ESM build works like the script tag', async (t) => {
  const key = newKey();
  const context = await run(() => openContext(env, key, { ...SITE_CONFIG, flushInterval: 250 }, true));
  try {
    const page = await context.newPage();
    const v = new Visitor(page, env.fixtures.url, seeded(7));
    await v.goto('/shop.html');
    await v.click('#wishlist');
    await settle(page);
    const signals = env.capture.events(key).filter((e) => e.type === 'signal');
    t.deepEqual(
      signals.map((e) => `${e.signal} ${e.selector}`),
      ['dead_click #wishlist'],
    );
    t.true(env.capture.events(key).some((e) => e.type === 'page_view' && e.page === '/shop.html'));
  } finally {
    await context.close();
  }
});

/** Some of the SDK's modules, bundled alone into a script that sets the global `name`. */
async function bundled(contents: string, name: string): Promise<string> {
  const out = await build({
    stdin: { contents, resolveDir: import.meta.dirname, loader: 'ts' },
    bundle: true,
    format: 'iife',
    globalName: name,
    write: false,
  });
  return out.outputFiles[0].text;
}

/** selector.ts, label.ts and coords.ts bundled alone and run against hand-made DOM. */
test('selectors, labels and coordinates in a real DOM', async (t) => {
  const code = await bundled(
    `export { selectorFor } from './src/selector.ts'; export { labelFor } from './src/label.ts'; export { coordsFor } from './src/coords.ts';`,
    'T',
  );
  const page = await env.browser.newPage();
  try {
    await page.setContent(`
      <main id="app">
        <button id=":r3:">Generated id</button>
        <button id="ember1234">Ember id</button>
        <div data-testid="save-bar"><button>Save</button><button>Save as</button></div>
        <button aria-label='Close "dialog"'>×</button>
        <section><p>One</p><p>Two <a href="#">more</a></p></section>
        <label for="pw">Your password</label><input id="pw" type="password" value="hunter2-secret">
        <input type="submit" value="Send it">
        <div id="big" style="width:400px;height:200px;margin-top:20px">${'word '.repeat(5000)}</div>
        <div contenteditable="true" id="ed">typed by the user</div>
        <div id="widgets"><span></span><span></span></div>
      </main>`);
    await page.addScriptTag({ content: code });
    const r = await page.evaluate(() => {
      const T = (
        window as unknown as {
          T: {
            selectorFor(e: Element): string;
            labelFor(e: Element): string | undefined;
            coordsFor(e: Element, p: object): object;
          };
        }
      ).T;
      const q = (s: string): Element => document.querySelector(s)!;
      const all = (s: string): Element[] => Array.from(document.querySelectorAll(s));
      const big = q('#big').getBoundingClientRect();
      // Two components with the same button inside their open roots, the second holding a component of its own.
      const [one, two] = all('#widgets > span').map((h) => h.attachShadow({ mode: 'open' }));
      one.innerHTML = two.innerHTML = '<p><button id="save">Save</button></p><span id="in"></span>';
      two.getElementById('in')!.attachShadow({ mode: 'open' }).innerHTML = '<i>deep</i>';
      return {
        shadowOne: T.selectorFor(one.getElementById('save')!),
        shadowTwo: T.selectorFor(two.getElementById('save')!),
        shadowDeep: T.selectorFor(two.getElementById('in')!.shadowRoot!.querySelector('i')!),
        generated: T.selectorFor(all('button')[0]),
        ember: T.selectorFor(all('button')[1]),
        inTestId: T.selectorFor(q('[data-testid] button:nth-child(2)')),
        aria: T.selectorFor(q('[aria-label]')),
        ariaUnique: document.querySelectorAll(T.selectorFor(q('[aria-label]'))).length,
        nested: T.selectorFor(q('section a')),
        pwLabel: T.labelFor(q('#pw')),
        submitLabel: T.labelFor(q('[type=submit]')),
        bigLabelLength: T.labelFor(q('#big'))!.length,
        editableLabel: T.labelFor(q('#ed')),
        center: T.coordsFor(q('#big'), {
          clientX: big.left + 100,
          clientY: big.top + 150,
          pageX: big.left + 100 + scrollX,
          pageY: big.top + 150 + scrollY,
        }),
        outside: T.coordsFor(q('#big'), { clientX: big.left - 50, clientY: big.bottom + 10, pageX: 0, pageY: 0 }),
      };
    });
    t.is(r.generated, '#app > button:nth-of-type(1)', 'a React useId is not a stable id');
    t.is(r.ember, '#app > button:nth-of-type(2)', 'an Ember view id is not a stable id');
    t.is(r.inTestId, '[data-testid="save-bar"] > button:nth-of-type(2)', 'anchored at the nearest test id');
    t.is(r.aria, 'button[aria-label="Close \\"dialog\\""]');
    t.is(r.ariaUnique, 1, 'the quoted aria-label selector is valid CSS and unique');
    t.is(r.nested, 'a', 'the shortest unique path');
    t.is(r.shadowOne, '#save', 'inside an open root: the path in that root (the host is not part of it)');
    t.is(r.shadowTwo, '#save');
    t.is(r.shadowDeep, 'i', 'nested roots: the path in the innermost root');
    t.is(r.pwLabel, 'Your password', 'a field is named by its label, never its value');
    t.is(r.submitLabel, 'Send it', 'a submit input is named by its caption');
    t.is(r.bigLabelLength, 80, 'labels are capped at 80 characters');
    t.is(r.editableLabel, undefined, 'editable content is never used as a label');
    t.like(r.center, { x: 250, y: 750 });
    t.like(r.outside, { x: 0, y: 1000 }, 'clamped to 0..1000');
  } finally {
    await page.close();
  }
});

/** scrub.ts bundled alone: what a visitor types, and personal-looking text, never survive it. */
test('scrubbing free text of typed values, e-mails, numbers and quotes', async (t) => {
  const code = await bundled(`export { scrub, watchTyping } from './src/scrub.ts';`, 'S');
  const page = await env.browser.newPage();
  try {
    await page.setContent(
      '<input id="code"><textarea id="note"></textarea><input id="box" type="checkbox" value="yes-please">',
    );
    await page.addScriptTag({ content: code });
    await page.evaluate(() => (window as unknown as { S: { watchTyping(): void } }).S.watchTyping());
    await page.type('#code', 'Spring15');
    await page.type('#note', '  private note  ');
    await page.click('#box');
    const r = await page.evaluate(() => {
      const S = (window as unknown as { S: { scrub(s: string, quoted?: boolean): string } }).S;
      return [
        "Cannot read properties of undefined (reading 'SPRING15')",
        'Code spring15 is not valid',
        'Your PRIVATE NOTE was saved',
        'Write to ada.l@example.com today',
        'Card 4242 4242 4242 4242, order 2024-118-77, room 42',
        'Search for "hiking boots" and don\'t stop',
        'Tick yes-please to agree',
        'Close "dialog"',
      ].map((s, i) => S.scrub(s, i !== 7));
    });
    t.deepEqual(r, [
      'Cannot read properties of undefined (reading …)',
      'Code … is not valid',
      'Your … was saved',
      'Write to … today',
      'Card …, order …, room 42',
      "Search for … and don't stop",
      'Tick yes-please to agree',
      'Close "dialog"',
    ]);
  } finally {
    await page.close();
  }
});

test.after('no batch anywhere broke the ingest contract', (t) => {
  t.deepEqual(
    env.capture.invalid.map((x) => x.issues),
    [],
  );
  for (const r of env.capture.received.filter((x) => x.status === 202))
    t.true(IngestBatchSchema.safeParse(r.raw).success);
});
