// Node 24 strips TypeScript types itself, so ava loads .ts test files as plain ES modules.
// TEST_BROWSER=skip leaves out the Chromium suites (*.browser.test.ts); TEST_BROWSER=only runs just them.
const all = '{shared,ingest,processor,api,ops,cli}/**/*.test.ts';
const browser = '{shared,ingest,processor,api,ops,cli}/**/*.browser.test.ts';
const choices = { '': [all], skip: [all, `!${browser}`], only: [browser] };
const files = choices[process.env.TEST_BROWSER ?? ''];
if (!files) throw new Error(`TEST_BROWSER must be skip or only, not ${JSON.stringify(process.env.TEST_BROWSER)}`);

export default {
  files,
  extensions: { ts: 'module' },
  timeout: '120s',
  workerThreads: false,
  concurrency: 2,
};
