#!/usr/bin/env node
// The `friction` bin of @friction/cli: the commands live in commands.ts, importable without running them.
import { main } from './commands.ts';

process.exitCode = await main(process.argv.slice(2));
