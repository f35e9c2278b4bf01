// Node 24 strips TypeScript types itself, so ava loads .ts test files as plain ES modules.
export default {
  files: ['{shared,ingest,processor,api,ops,cli}/**/*.test.ts'],
  extensions: { ts: 'module' },
  timeout: '120s',
  workerThreads: false,
  concurrency: 2,
};
