/**
 * Serves ingest/sdk/fixtures on 127.0.0.1 (port 0) as a small site, with the SDK injected at each
 * page's `<!--FRICTION-->` marker (and the import map of the site's libraries at `<!--IMPORTMAP-->`).
 * What is injected is decided per browser context through the `friction` cookie, so concurrent visitors
 * can use different keys and options on one server: `{ key, endpoint, config?, esm? }`; without the cookie
 * the page has no SDK at all.
 */
import { readFile } from 'node:fs/promises';
import { build } from 'esbuild';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestFn } from 'ava';
import { useResource } from '../../../shared/testing/lifecycle.ts';
import { buildSdk } from '../build.ts';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');

const modules = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'node_modules');
/** The bare names the fixture apps import, by the URL this server answers them at. */
const IMPORTS = {
  preact: '/vendor/preact.mjs',
  'preact/hooks': '/vendor/preact-hooks.mjs',
  // One bundle for both names (see bundleReact).
  react: '/vendor/react.mjs',
  'react-dom/client': '/vendor/react.mjs',
};
/** What a page's `<!--IMPORTMAP-->` marker becomes. */
const IMPORT_MAP = `<script type="importmap">${JSON.stringify({ imports: IMPORTS })}</script>`;

/** Library modules served from node_modules as they are, by URL. */
const VENDOR: Record<string, string> = {
  [IMPORTS.preact]: 'preact/dist/preact.mjs',
  [IMPORTS['preact/hooks']]: 'preact/hooks/dist/hooks.mjs',
};

/**
 * React from npm for the React fixture. React 19's package ships CommonJS only (no browser ESM or UMD
 * build), so the site's own bundle is made the way a React site makes it: esbuild, production mode, one
 * module that both `react` and `react-dom/client` map to in the page's import map (two bundles would
 * carry two copies of React, and hooks break across copies). Built once per process, on first request.
 */
let react: Promise<string> | undefined;
const bundleReact = async (): Promise<string> => {
  const out = await build({
    stdin: {
      contents: "export { createElement, useState } from 'react'; export { createRoot } from 'react-dom/client';",
      resolveDir: modules,
      loader: 'js',
    },
    bundle: true,
    format: 'esm',
    write: false,
    logLevel: 'silent',
    // Minified for the browser, esbuild defines NODE_ENV as production: React's production build, as sites ship it.
    platform: 'browser',
    minify: true,
  });
  return out.outputFiles[0].text;
};

/** How long /slow.html and /api/slow take to answer: longer than the dead-click window, on purpose. */
export const SLOW_PAGE_MS = 2500;

export interface SdkCookie {
  key: string;
  /** Ingest base URL. Omitted: no data-endpoint, so the script tag's own origin is used, as in a site's snippet. */
  endpoint?: string;
  /** Where the script tag loads the SDK from (e.g. the service's /v1/sdk.js); default this server's copy. */
  src?: string;
  /** Any other init options, passed through data-config. */
  config?: Record<string, unknown>;
  /** Load the ESM build with an inline `import` instead of the script tag. */
  esm?: boolean;
}

const attr = (v: string): string => v.replace(/&/g, '&amp;').replace(/"/g, '&quot;');

function snippet(c: SdkCookie): string {
  if (c.esm) {
    const opts = JSON.stringify({ key: c.key, endpoint: c.endpoint, ...c.config });
    // The module is exposed as window.Friction only so tests can read stats() the same way.
    return `<script type="module">import * as F from '/friction.mjs'; window.Friction = F; F.init(${opts});</script>`;
  }
  const config = c.config ? ` data-config="${attr(JSON.stringify(c.config))}"` : '';
  const endpoint = c.endpoint ? ` data-endpoint="${attr(c.endpoint)}"` : '';
  return `<script src="${attr(c.src ?? '/sdk.js')}" data-key="${attr(c.key)}"${endpoint}${config}></script>`;
}

export function sdkCookie(c: SdkCookie): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

function readCookie(header: string | undefined): SdkCookie | null {
  const m = /(?:^|;\s*)friction=([^;]+)/.exec(header || '');
  if (!m) return null;
  try {
    return JSON.parse(Buffer.from(m[1], 'base64url').toString('utf8')) as SdkCookie;
  } catch {
    return null;
  }
}

export interface Fixtures {
  url: string;
  close(): Promise<void>;
}

/** The fixture site the tests of a file share, serving a fresh build of the SDK (`sdk`, for its version). */
export function useFixtures<C>(test: TestFn<C>): Fixtures & { sdk: Awaited<ReturnType<typeof buildSdk>> } {
  return useResource(
    test,
    async () => {
      const sdk = await buildSdk();
      return Object.assign(await startFixtures(sdk), { sdk });
    },
    (fixtures) => fixtures.close(),
  );
}

export async function startFixtures(sdk: { iife: string; esm: string }): Promise<Fixtures> {
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url || '/', 'http://x');
      let p = url.pathname;
      if (p === '/sdk.js' || p === '/friction.mjs') {
        res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'no-store' });
        res.end(p === '/sdk.js' ? sdk.iife : sdk.esm);
        return;
      }
      // Preact from npm (ESM in the package), served as the site's own modules (the Preact fixture imports them through an import map).
      const vendor = VENDOR[p];
      if (vendor) {
        res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8' });
        res.end(await readFile(path.join(modules, vendor)));
        return;
      }
      if (p === IMPORTS.react) {
        react ??= bundleReact();
        const code = await react.catch((e: unknown) => {
          react = undefined;
          throw e;
        });
        res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8' }).end(code);
        return;
      }
      if (p === '/api/slow') {
        await new Promise((r) => setTimeout(r, SLOW_PAGE_MS));
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ estimate: '2 days' }));
        return;
      }
      if (p === '/') p = '/index.html';
      if (p === '/app' || p.startsWith('/app/')) p = '/app.html';
      if (p === '/kb' || p === '/kb/') p = '/kb.html';
      if (p === '/slow.html') await new Promise((r) => setTimeout(r, SLOW_PAGE_MS));
      const file = path.join(dir, path.normalize(p).replace(/^([/\\])+/, ''));
      if (!file.startsWith(dir) || !/\.(html|css)$/.test(file)) {
        res.writeHead(404).end();
        return;
      }
      let body: string;
      try {
        body = await readFile(file, 'utf8');
      } catch {
        res.writeHead(404).end();
        return;
      }
      if (file.endsWith('.css')) {
        res.writeHead(200, { 'Content-Type': 'text/css' }).end(body);
        return;
      }
      const c = readCookie(req.headers.cookie);
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
      res.end(body.replace('<!--IMPORTMAP-->', IMPORT_MAP).replace('<!--FRICTION-->', c ? snippet(c) : ''));
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
