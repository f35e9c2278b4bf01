import { existsSync } from 'node:fs';

/** `friction bench <name>`: runs ops/bench/<name>.bench.ts. */
export async function runBenchCommand(args: string[]): Promise<void> {
  const [name, ...rest] = args;
  const file = name ? new URL(`./${name}.bench.ts`, import.meta.url) : undefined;
  if (!name || !file || !/^[a-z0-9-]+$/.test(name) || !existsSync(file)) {
    process.stderr.write(
      `usage: npm run bench -- <name>   (available: pipeline, engine, processor, embedded, restart, sdk, verify, alerts, mcp, query, export, scale, shed, storage)
`,
    );
    process.exitCode = 2;
    return;
  }
  const mod = (await import(file.href)) as { runBench(args: string[]): Promise<void> };
  await mod.runBench(rest);
}
