/**
 * The README and docs/ stay navigable (issue 28): every relative link resolves to a file, and its #anchor to a
 * heading of that file; every environment variable the code reads has exactly one row in a configuration table.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { EnvSchema } from '../shared/config.ts';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const docFiles = [
  'README.md',
  ...readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  'ingest/sdk/README.md',
  'ingest/sdk/DETECTION.md',
  'cli/README.md',
];

/** Markdown outside fenced code blocks and inline code, where links and headings live. */
function prose(md: string): string {
  return md.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(md: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of md.replace(/^```[\s\S]*?^```/gm, '').split('\n')) {
    const m = /^#{1,6}\s+(.*)$/.exec(line);
    if (!m) continue;
    const base = m[1]
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

test('the README fits on a screen or two (at most 300 lines)', (t) => {
  t.true(readFileSync(path.join(root, 'README.md'), 'utf8').split('\n').length <= 300);
});

test('every relative link in the README and docs resolves, anchors included', (t) => {
  const broken: string[] = [];
  for (const file of docFiles) {
    const md = readFileSync(path.join(root, file), 'utf8');
    for (const [, target] of prose(md).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^(https?:|mailto:)/.test(target)) continue;
      const [rel, anchor] = target.split('#');
      const resolved = rel ? path.resolve(path.dirname(path.join(root, file)), rel) : path.join(root, file);
      if (!existsSync(resolved)) {
        broken.push(`${file}: ${target} (no such file)`);
        continue;
      }
      if (anchor && !(statSync(resolved).isFile() && anchors(readFileSync(resolved, 'utf8')).has(anchor)))
        broken.push(`${file}: ${target} (no such heading)`);
    }
  }
  t.deepEqual(broken, []);
});

/**
 * Every variable the code reads: the service's schema, plus direct reads of process.env / io.env outside tests.
 * ops/bench is left out: its BENCH_* knobs pass settings from `npm run bench` to the child processes it spawns; so is
 * ops/testing, whose fixture processes take their settings from the tests that spawn them.
 */
const isBench = (dir: string, name: string): boolean =>
  ['bench', 'testing'].some((d) => path.relative(root, path.join(dir, name)) === path.join('ops', d));
function variablesRead(): Set<string> {
  const names = new Set(Object.keys(EnvSchema.shape));
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (
        entry.name === 'node_modules' ||
        entry.name === 'dist' ||
        isBench(dir, entry.name) ||
        entry.name.startsWith('.')
      )
        continue;
      const p = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (/\.(ts|mjs|sh)$/.test(entry.name) && !/\.test\.ts$/.test(entry.name) && entry.name !== 'friction.mjs') {
        const src = readFileSync(p, 'utf8');
        for (const m of src.matchAll(
          /\b(?:process\.env|io\.env|env)(?:\.([A-Z][A-Z0-9_]+)|\[['"]([A-Z][A-Z0-9_]+)['"]\])/g,
        ))
          names.add(m[1] ?? m[2]);
        if (entry.name.endsWith('.sh'))
          for (const m of src.matchAll(/\$\{?(FRICTION_[A-Z0-9_]+|INPUT_[A-Z0-9_]+)/g)) names.add(m[1]);
      }
    }
  };
  for (const dir of ['shared', 'ingest', 'processor', 'api', 'ops', 'cli', 'ci'])
    if (existsSync(path.join(root, dir))) walk(path.join(root, dir));
  // GitHub sets INPUT_* and GITHUB_* for every action, and PATH, HOME and USER are the shell's: not ours to document.
  for (const n of [...names])
    if (/^(INPUT_|GITHUB_)/.test(n) || n === 'PATH' || n === 'HOME' || n === 'USER') names.delete(n);
  return names;
}

test('every configuration variable the code reads is documented exactly once, in docs/configuration.md', (t) => {
  const rows = new Map<string, string[]>();
  for (const file of docFiles) {
    for (const [, name] of readFileSync(path.join(root, file), 'utf8').matchAll(/^\|\s*`([A-Z][A-Z0-9_]+)`\s*\|/gm))
      rows.set(name, [...(rows.get(name) ?? []), file]);
  }
  const problems: string[] = [];
  for (const name of variablesRead()) {
    const where = rows.get(name) ?? [];
    if (where.length !== 1 || where[0] !== 'docs/configuration.md')
      problems.push(`${name}: ${where.length ? where.join(', ') : 'not documented'}`);
  }
  t.deepEqual(problems, []);
});
