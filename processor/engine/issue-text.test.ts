import test from 'ava';
import { MAX_LABEL_IN_TITLE, elementNoun, hasPhrasing, issueTarget, issueText } from './issue-text.ts';
import { SIGNAL_CATALOG } from '../../shared/domain/signal-catalog.ts';

test('the example from the issue: rage clicks on a pay button', (t) => {
  const text = issueText({ signalType: 'rage_click', label: 'Pay now', selector: 'button#pay-now', page: '/checkout' });
  t.is(text.title, "Visitors rage-click 'Pay now' on /checkout");
  t.is(
    text.hypothesis,
    'the button likely looks active but does not respond, or responds too slowly for visitors to notice',
  );
});

test('each catalogued type has its own wording', (t) => {
  const base = { label: 'Create account', selector: 'form > button[type=submit]', page: '/signup' };
  t.is(
    issueText({ ...base, signalType: 'disabled_element_attempt' }).title,
    "Visitors try to use the disabled 'Create account' on /signup",
  );
  t.is(
    issueText({ ...base, signalType: 'dead_click' }).title,
    "Visitors click 'Create account' on /signup and nothing happens",
  );
  t.is(
    issueText({ ...base, signalType: 'navigation_loop', label: null, selector: '' }).title,
    'Visitors go back and forth from /signup',
  );
  t.is(
    issueText({ ...base, signalType: 'form_abandon', label: null, selector: '' }).title,
    'Visitors abandon a form on /signup',
  );
  t.regex(issueText({ ...base, signalType: 'error_encounter' }).hypothesis, /after visitors act on the button/);
});

test('an unknown type still gets a readable title', (t) => {
  const text = issueText({ signalType: 'hover_hesitation', label: 'Plans', selector: 'a.plans', page: '/' });
  t.is(text.title, "Visitors trigger hover_hesitation on 'Plans' on /");
  t.regex(text.hypothesis, /catalog does not describe/);
});

test('without a label the title names the selector; long labels are cut', (t) => {
  t.is(issueTarget(null, '#pay', 'rage_click'), '#pay');
  t.is(issueTarget('  ', '#pay', 'rage_click'), '#pay');
  t.is(issueTarget(null, '', 'rage_click'), 'the page');
  const long = issueTarget('x'.repeat(200), '#a', 'rage_click');
  t.is(long.length, MAX_LABEL_IN_TITLE + 2, 'quotes included');
  t.true(long.endsWith("…'"));
  t.is(issueTarget(' Pay\n  now ', '#a', 'rage_click'), "'Pay now'", 'whitespace collapsed');
});

test('a label containing a placeholder is not substituted again', (t) => {
  t.is(
    issueText({ signalType: 'rage_click', label: 'Go to {page}', selector: 'a', page: '/x' }).title,
    "Visitors rage-click 'Go to {page}' on /x",
  );
});

test('element nouns come from the last compound of the selector', (t) => {
  t.is(elementNoun('form > button.primary'), 'button');
  t.is(elementNoun('div > input[type="submit"]'), 'button');
  t.is(elementNoun('div[role=button]'), 'button');
  t.is(elementNoun('div.btn-primary'), 'button');
  t.is(elementNoun('nav a.link'), 'link');
  t.is(elementNoun('form input#email'), 'field');
  t.is(elementNoun('select'), 'field');
  t.is(elementNoun('main img.hero'), 'image');
  t.is(elementNoun('button > span.label'), 'element', 'the clicked node is the span');
  t.is(elementNoun('#pay-now'), 'element');
});

test('every catalogued signal type has issue wording', (t) => {
  for (const d of SIGNAL_CATALOG)
    t.true(hasPhrasing(d.type), `${d.type} needs a title and hypothesis in issue-text.ts`);
});
