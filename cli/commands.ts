/**
 * The `@friction/cli` package: the commands a CI job or a workstation runs against a Friction service over
 * HTTP. Bundled from cli/main.ts by esbuild into one file for Node 20 and newer (cli/build.ts); it must import nothing but node
 * built-ins and modules that do the same (cli/package.test.ts checks the bundle). Each command is one entry of
 * COMMANDS: a module exporting `run(argv, io)` plus a line here.
 */
import pkg from './package.json' with { type: 'json' };
import { defaultIo, runDeployCommand, type CliIo } from '../ops/deploy-cli.ts';
import { runDoctorCommand } from './doctor.ts';
import { runMcpCommand } from './mcp.ts';

interface CommandEntry {
  summary: string;
  run(argv: readonly string[], io: CliIo): Promise<number>;
}

export const COMMANDS: Record<string, CommandEntry> = {
  deploy: {
    summary: 'record a deploy, or wait for its verdict and gate on it (friction deploy --help)',
    run: (argv, io) => runDeployCommand(argv, io),
  },
  doctor: {
    summary: 'check the service, its version, the key and the site',
    run: (argv, io) => runDoctorCommand(argv, io, pkg.version),
  },
  mcp: {
    summary: 'MCP over stdio for a desktop assistant, forwarding to the service (friction mcp --help)',
    run: (argv, io) => runMcpCommand(argv, io),
  },
};

const usage = (): string => `friction ${pkg.version}: the Friction command line

Usage: friction <command> [options]

${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(8)} ${c.summary}`)
  .join('\n')}

  --version  print the version
  --help     this help

Environment: FRICTION_BASE_URL, FRICTION_SECRET_KEY, FRICTION_SITE_ID (or --base-url, --key, --site);
for mcp: FRICTION_URL, FRICTION_KEY (or --url, --key).`;

/** Resolves to the exit code: 0 success, 1 a failed gate or check, 2 usage, connection or API errors. */
export async function main(argv: readonly string[], io: CliIo = defaultIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-v') {
    io.out(pkg.version);
    return 0;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    io.out(usage());
    return 0;
  }
  const command = name === undefined ? undefined : COMMANDS[name];
  if (!command) {
    io.err(`${name === undefined ? 'friction: missing command' : `friction: unknown command ${name}`}\n\n${usage()}`);
    return 2;
  }
  try {
    return await command.run(rest, io);
  } catch (err) {
    io.err(`friction ${name}: ${(err as Error).message}`);
    return 2;
  }
}
