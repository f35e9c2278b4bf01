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

// What ava does to a test file that timed out: SIGTERM, which skips its teardowns. The role it started, and the role's
// own child, must not outlive it.
test('a test process sent SIGTERM kills the process groups of the roles it started', async (t) => {
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
  t.teardown(() => file.kill('SIGKILL'));
  const rolePid = await new Promise<number>((resolve) => file.stdout.once('data', (b: Buffer) => resolve(Number(b))));
  await eventually(() => liveInGroup(rolePid).length === 2, { what: 'the role and its child' });
  file.kill('SIGTERM');
  t.is(await new Promise((resolve) => file.once('exit', (code) => resolve(code))), 143);
  await eventually(() => liveInGroup(rolePid).length === 0, { what: "the role's group gone" });
  t.pass();
});
