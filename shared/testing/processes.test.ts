import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import test from 'ava';
import { eventually } from './eventually.ts';
import { NODE, repoRoot } from './processes.ts';

/** The live (not zombie) processes of process group `pgid`. */
function liveInGroup(pgid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // pid (comm) state ppid pgrp …: comm may hold spaces, so split after its closing parenthesis.
      const [state, , pgrp] = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ');
      if (Number(pgrp) === pgid && state !== 'Z') pids.push(Number(entry));
    } catch {
      // Exited while we read.
    }
  }
  return pids;
}

// What ava does to a test file that timed out: SIGTERM, which skips its teardowns (and a terminal's Ctrl-C: SIGINT). The
// role it started, and the role's own child, must not outlive it.
for (const [signal, code] of [
  ['SIGTERM', 143],
  ['SIGINT', 130],
] as const)
  test(`a test process sent ${signal} kills the process groups of the roles it started`, async (t) => {
    const child = "require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'])";
    const role = `${child}; setInterval(() => {}, 1000);`;
    const file = spawn(
      NODE,
      [
        '--input-type=module',
        '-e',
        `import { spawnRole } from ${JSON.stringify(`${repoRoot}/shared/testing/processes.ts`)};
       const p = spawnRole(['-e', ${JSON.stringify(role)}]);
       console.log(p.pid);
       setInterval(() => {}, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let rolePid = 0;
    // Should the check fail, the role and its child must not outlive the test either (they would hold ava's stderr).
    t.teardown(() => {
      file.kill('SIGKILL');
      for (const pid of rolePid ? [rolePid, ...liveInGroup(rolePid)] : [])
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone already.
        }
    });
    rolePid = await new Promise<number>((resolve) => file.stdout.once('data', (b: Buffer) => resolve(Number(b))));
    await eventually(() => liveInGroup(rolePid).length === 2, { what: 'the role and its child' });
    file.kill(signal);
    t.is(await new Promise((resolve) => file.once('exit', (c) => resolve(c))), code);
    await eventually(() => liveInGroup(rolePid).length === 0, { what: "the role's group gone" });
  });
