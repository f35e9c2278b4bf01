import test from 'ava';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const ROLES = ['ingest', 'processor', 'api'] as const;

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...tsFiles(p));
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

function imports(file: string): string[] {
  const src = readFileSync(file, 'utf8');
  return [...src.matchAll(/(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)].map(
    (m) => m[1] ?? m[2],
  );
}

/** Top-level folder a relative import of `file` lands in. */
function targetTop(file: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  return relative(root, resolve(file, '..', spec)).split('/')[0];
}

test('ingest, processor and api never import each other; shared imports none of them', (t) => {
  const violations: string[] = [];
  for (const top of [...ROLES, 'shared']) {
    for (const file of tsFiles(join(root, top))) {
      for (const spec of imports(file)) {
        const target = targetTop(file, spec);
        if (!target || target === top) continue;
        // A role's route tests sit beside its routes and run them in the whole test stack (ops/testing/stack.ts).
        if (
          top !== 'shared' &&
          file.endsWith('.test.ts') &&
          relative(root, resolve(file, '..', spec)).startsWith('ops/testing/')
        )
          continue;
        // Roles may import shared/; shared/ may import nothing outside itself.
        if (top === 'shared' || target !== 'shared') violations.push(`${relative(root, file)} imports ${spec}`);
      }
    }
  }
  t.deepEqual(violations, []);
});

test('shared/testing is imported only by tests and test tooling', (t) => {
  const violations: string[] = [];
  for (const top of [...ROLES, 'shared', 'ops']) {
    for (const file of tsFiles(join(root, top))) {
      const rel = relative(root, file);
      if (
        rel.endsWith('.test.ts') ||
        rel.startsWith('shared/testing/') ||
        rel.startsWith('ops/testing/') ||
        rel === 'ops/test-with-services.ts' ||
        rel.startsWith('ops/bench/') ||
        rel.startsWith('ops/chaos/')
      )
        continue;
      for (const spec of imports(file)) {
        const abs = relative(root, resolve(file, '..', spec));
        if (spec.startsWith('.') && (abs.startsWith('shared/testing') || abs.startsWith('ops/testing')))
          violations.push(`${rel} imports ${spec}`);
      }
    }
  }
  t.deepEqual(violations, []);
});

test('the architecture check itself catches a cross-role import', (t) => {
  t.is(targetTop(join(root, 'api/x.ts'), '../processor/y.ts'), 'processor');
  t.is(targetTop(join(root, 'api/routes/a/b.ts'), '../../../shared/z.ts'), 'shared');
});

/**
 * The layering of `api/` (beside the role boundaries of architecture.test.ts): one folder per resource under
 * api/routes, route plumbing in api/http. A route folder is a leaf: it never imports another folder's routes, and
 * it reads another resource only where its answer embeds that resource (a page shows its issues), through that
 * resource's schema, queries or presenter. Those composing edges are listed here, so a new one is a decision
 * made in review rather than a neighbour copied; the folder graph has no cycle; api/http imports no route.
 */
const routesDir = join(root, 'api/routes');

/** Folder → the resources its answers embed. */
const COMPOSES: Record<string, readonly string[]> = {
  // /query/page: the page's open issues, elements, recent deploys, active alerts, and its score.
  pages: ['alerts', 'deploys', 'elements', 'issues', 'scores'],
  // /query/mcp/context: scores, deploys and recommendations in one answer.
  context: ['deploys', 'revenue', 'scores'],
  // An issue's detail lists its verification records, which deploys write.
  issues: ['deploys'],
  // A recorded deploy keeps the site's score at that moment (confusion_before).
  deploys: ['scores'],
};

function relativeImports(file: string): string[] {
  return imports(file)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => resolve(dirname(file), spec));
}

/** The resource folder of a path under api/routes, or null outside it. */
function folderOf(path: string): string | null {
  const rel = relative(routesDir, path);
  return rel.startsWith('..') || !rel.includes('/') ? null : rel.split('/')[0];
}

interface Edge {
  from: string;
  to: string;
  file: string;
  target: string;
}

/** What breaks the layering among `edges`: a route module imported across folders, an edge not in `composes`. */
function violations(edges: readonly Edge[], composes: Record<string, readonly string[]>): string[] {
  const out: string[] = [];
  for (const e of edges) {
    if (e.target.endsWith('.routes.ts')) out.push(`${e.file} imports another folder's routes: ${e.target}`);
    else if (!composes[e.from]?.includes(e.to)) out.push(`${e.file} imports ${e.target} (${e.from} → ${e.to})`);
  }
  return out;
}

/** A cycle among the folders of `edges`, as a path, or null. */
function cycle(edges: readonly Edge[]): string[] | null {
  const next = new Map<string, Set<string>>();
  for (const e of edges) next.set(e.from, (next.get(e.from) ?? new Set()).add(e.to));
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (n: string): string[] | null => {
    if (state.get(n) === 'open') return [...path.slice(path.indexOf(n)), n];
    if (state.get(n) === 'done') return null;
    state.set(n, 'open');
    path.push(n);
    for (const m of next.get(n) ?? []) {
      const found = visit(m);
      if (found) return found;
    }
    path.pop();
    state.set(n, 'done');
    return null;
  };
  for (const n of next.keys()) {
    const found = visit(n);
    if (found) return found;
  }
  return null;
}

function crossFolderEdges(): Edge[] {
  const edges: Edge[] = [];
  for (const file of tsFiles(routesDir)) {
    const from = folderOf(file);
    for (const target of relativeImports(file)) {
      const to = folderOf(target);
      if (from && to && from !== to)
        edges.push({ from, to, file: relative(root, file), target: relative(root, target) });
    }
  }
  return edges;
}

test('route folders import each other only where an answer embeds another resource, never its routes', (t) => {
  t.deepEqual(violations(crossFolderEdges(), COMPOSES), []);
});

test('the folders under api/routes import each other without a cycle', (t) => {
  t.is(cycle(crossFolderEdges()), null);
});

test('api/http (route plumbing) imports no route folder', (t) => {
  const bad = tsFiles(join(root, 'api/http')).flatMap((file) =>
    relativeImports(file)
      .filter((target) => folderOf(target) !== null)
      .map((target) => `${relative(root, file)} imports ${relative(root, target)}`),
  );
  t.deepEqual(bad, []);
});

test('every folder named in COMPOSES exists, so a rename cannot leave a stale permission behind', (t) => {
  const folders = new Set(readdirSync(routesDir).filter((n) => statSync(join(routesDir, n)).isDirectory()));
  for (const [from, tos] of Object.entries(COMPOSES)) for (const f of [from, ...tos]) t.true(folders.has(f), f);
});

test('the checks catch a cross-folder import, an import of routes, and a cycle', (t) => {
  const e = (from: string, to: string, target = `api/routes/${to}/${to}.queries.ts`): Edge => ({
    from,
    to,
    file: `api/routes/${from}/${from}.routes.ts`,
    target,
  });
  t.is(violations([e('alerts', 'issues')], COMPOSES).length, 1);
  t.is(violations([e('pages', 'issues', 'api/routes/issues/issues.routes.ts')], COMPOSES).length, 1);
  t.deepEqual(violations([e('pages', 'issues')], COMPOSES), []);
  t.deepEqual(cycle([e('a', 'b'), e('b', 'c'), e('c', 'a')]), ['a', 'b', 'c', 'a']);
  t.is(cycle([e('a', 'b'), e('b', 'c')]), null);
  t.is(folderOf(join(routesDir, 'issues/issues.queries.ts')), 'issues');
});
