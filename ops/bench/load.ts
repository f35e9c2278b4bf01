import http from 'node:http';

export interface LoadResult {
  requests: number;
  ok: number;
  failed: number;
  seconds: number;
  latenciesMs: number[];
}

/**
 * Posts `bodies` to `url` from `concurrency` keep-alive connections as fast as the server answers.
 * Measures each request's latency (send → full response).
 */
export async function runLoad(opts: {
  url: string;
  bodies: readonly string[];
  headers: Record<string, string>;
  concurrency: number;
  okStatus: number;
  onProgress?: (done: number) => void;
}): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.concurrency });
  const u = new URL(opts.url);
  const latencies: number[] = [];
  let next = 0;
  let ok = 0;
  let failed = 0;
  const started = performance.now();
  const one = (body: string) =>
    new Promise<number>((resolve) => {
      const req = http.request(
        { agent, host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { ...opts.headers, 'content-length': Buffer.byteLength(body) } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', () => resolve(0));
      req.end(body);
    });
  const worker = async () => {
    while (next < opts.bodies.length) {
      const i = next++;
      const t0 = performance.now();
      const status = await one(opts.bodies[i]);
      latencies.push(performance.now() - t0);
      if (status === opts.okStatus) ok++;
      else failed++;
      if (i % 200 === 0) opts.onProgress?.(ok + failed);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  agent.destroy();
  return { requests: opts.bodies.length, ok, failed, seconds: (performance.now() - started) / 1000, latenciesMs: latencies };
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
