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
        rel.startsWith('ingest/sdk/testing/') ||
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
 * The layering of `api/` (beside the role boundaries above): one folder per resource under api/routes, each a leaf
 * that imports no other route folder. What several resources' answers embed (an issue, a deploy with its related
 * issues and verdict, an alert, an element, a score) is read and shaped once in api/read-models, which any route
 * folder may import; api/read-models and api/http (route plumbing) import no route folder.
 */
const routesDir = join(root, 'api/routes');

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

/** Whether `file` importing `target` reaches into a route folder other than its own. */
function crosses(file: string, target: string): boolean {
  const to = folderOf(target);
  return to !== null && to !== folderOf(file);
}

function crossings(files: readonly string[]): string[] {
  return files.flatMap((file) =>
    relativeImports(file)
      .filter((target) => crosses(file, target))
      .map((target) => `${relative(root, file)} imports ${relative(root, target)}`),
  );
}

test('no route folder imports another route folder', (t) => {
  t.deepEqual(crossings(tsFiles(routesDir).filter((f) => folderOf(f) !== null)), []);
});

test('api/read-models and api/http import no route folder', (t) => {
  t.deepEqual(crossings([...tsFiles(join(root, 'api/read-models')), ...tsFiles(join(root, 'api/http'))]), []);
});

test('the layering check catches an import across route folders and allows one within a folder or into a layer', (t) => {
  const r = (p: string) => join(routesDir, p);
  t.true(crosses(r('pages/page.queries.ts'), r('issues/issues.queries.ts')));
  t.true(crosses(join(root, 'api/read-models/issues.queries.ts'), r('issues/issues.schema.ts')));
  t.false(crosses(r('pages/page.queries.ts'), r('pages/budget.ts')));
  t.false(crosses(r('pages/page.queries.ts'), join(root, 'api/read-models/issues.queries.ts')));
  t.is(folderOf(r('issues/issues.queries.ts')), 'issues');
});
