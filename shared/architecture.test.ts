import test from 'ava';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

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
        rel.startsWith('ops/bench/')
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
