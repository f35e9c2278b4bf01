/**
 * Worker-thread entry of build.ts's terser pass: minifies each file it is given and exits. Terser's minify is
 * synchronous work (about a second per build on a busy two-core machine); in ingest it runs while the service
 * already answers, so it must not hold the thread that does.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { minify } from 'terser';
import type { MinifyJob } from './build.ts';

const jobs = workerData as MinifyJob[];
const out: string[] = [];
for (const j of jobs) {
  const r = await minify(j.code, j.options);
  out.push(r.code!);
}
parentPort!.postMessage(out);
