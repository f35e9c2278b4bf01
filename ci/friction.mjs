#!/usr/bin/env node

// cli/package.json
var package_default = {
  name: "@friction/cli",
  version: "0.1.0",
  description: "The friction command line: record deploys and gate CI on their UX verdict, check a Friction service (doctor).",
  license: "Apache-2.0",
  type: "module",
  bin: {
    friction: "./friction.mjs"
  },
  files: [
    "friction.mjs",
    "README.md",
    "CHANGELOG.md"
  ],
  engines: {
    node: ">=20"
  },
  keywords: [
    "friction",
    "ux",
    "deploy",
    "ci"
  ]
};

// ops/deploy-cli.ts
import { parseArgs } from "node:util";
var DEPLOY_USAGE = `friction deploy record --version V [--environment production|staging] [--commit SHA] [--url URL]
                      [--description TEXT] [--idempotency-key KEY]
friction deploy check (--deploy ID | --version V) [--environment production|staging] [--timeout 2h]
                      [--interval 30s] [--fail-on fail|warn]

  --base-url URL   the service (env FRICTION_BASE_URL)
  --key KEY        a secret key with manage:write (record) or query:read (check) (env FRICTION_SECRET_KEY)
  --site ID        the site (env FRICTION_SITE_ID; record may omit it: the key's own site)

check waits until the verdict is PASS or FAIL (or --timeout passes), printing progress to stderr, then prints the
verdict and its reasons. Exit 0 on PASS, 1 on FAIL (and on WARN with --fail-on warn), 2 on usage or connection errors.`;
var defaultIo = {
  out: (l) => process.stdout.write(`${l}
`),
  err: (l) => process.stderr.write(`${l}
`),
  env: process.env,
  fetch: (...a) => fetch(...a),
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
  now: () => Date.now()
};
var UsageError = class extends Error {
};
function parseDuration(s) {
  const m = /^(\d+)(ms|s|m|h|d)?$/.exec(s.trim());
  if (!m) throw new UsageError(`not a duration: ${s} (use e.g. 90s, 15m, 2h)`);
  const unit = { ms: 1, s: 1e3, m: 6e4, h: 36e5, d: 864e5 }[m[2] ?? "ms"];
  return Number(m[1]) * unit;
}
var ApiError = class extends Error {
};
function unreachable(err) {
  const cause = err.cause;
  return cause?.code ?? cause?.message ?? err.message;
}
async function call(io, base, key, method, path, body, headers = {}) {
  let res;
  try {
    res = await io.fetch(`${base.replace(/\/+$/, "")}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...body === void 0 ? {} : { "content-type": "application/json" },
        ...headers
      },
      body: body === void 0 ? void 0 : JSON.stringify(body)
    });
  } catch (err) {
    throw new ApiError(`cannot reach ${base}: ${unreachable(err)}`);
  }
  const text = await res.text();
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ApiError(`${method} ${path}: HTTP ${res.status}, not a JSON answer`);
  }
  if (!res.ok)
    throw new ApiError(
      `${method} ${path}: HTTP ${res.status} ${parsed?.error?.code ?? ""}: ${parsed?.error?.message ?? text}`
    );
  return parsed.data;
}
async function runDeployCommand(argv, io = defaultIo) {
  try {
    const [sub, ...rest] = argv;
    if (sub === "--help" || sub === "help") {
      io.out(DEPLOY_USAGE);
      return 0;
    }
    if (sub !== "record" && sub !== "check")
      throw new UsageError(sub ? `unknown deploy command: ${sub}` : "missing deploy command");
    const { values } = parseArgs({
      args: [...rest],
      strict: true,
      options: {
        "base-url": { type: "string" },
        key: { type: "string" },
        site: { type: "string" },
        version: { type: "string" },
        environment: { type: "string" },
        commit: { type: "string" },
        url: { type: "string" },
        description: { type: "string" },
        "idempotency-key": { type: "string" },
        deploy: { type: "string" },
        timeout: { type: "string" },
        interval: { type: "string" },
        "fail-on": { type: "string" }
      }
    });
    const base = values["base-url"] ?? io.env.FRICTION_BASE_URL;
    const key = values.key ?? io.env.FRICTION_SECRET_KEY;
    const site = values.site ?? io.env.FRICTION_SITE_ID;
    if (!base) throw new UsageError("--base-url (or FRICTION_BASE_URL) is required");
    if (!/^https?:\/\//.test(base)) throw new UsageError(`--base-url must be an http(s) URL: ${base}`);
    if (!key) throw new UsageError("--key (or FRICTION_SECRET_KEY) is required");
    const environment = values.environment ?? "production";
    if (environment !== "production" && environment !== "staging")
      throw new UsageError(`--environment must be production or staging, not ${environment}`);
    if (sub === "record") {
      if (!values.version) throw new UsageError("record needs --version");
      const body = {
        version: values.version,
        environment,
        ...site ? { site_id: site } : {},
        ...values.commit ? { commit_sha: values.commit } : {},
        ...values.url ? { url: values.url } : {},
        ...values.description ? { description: values.description } : {}
      };
      const headers = values["idempotency-key"] ? { "idempotency-key": values["idempotency-key"] } : {};
      const d2 = await call(io, base, key, "POST", "/v1/deploys", body, headers);
      io.out(
        `deploy ${d2.id} recorded: version ${d2.version} (${d2.environment}), site ${d2.site_id}, confusion_before ${d2.confusion_before}`
      );
      return 0;
    }
    if (!site) throw new UsageError("check needs --site (or FRICTION_SITE_ID)");
    if (!values.deploy === !values.version)
      throw new UsageError("check needs exactly one of --deploy ID or --version V");
    const failOn = values["fail-on"] ?? "fail";
    if (failOn !== "fail" && failOn !== "warn") throw new UsageError(`--fail-on must be fail or warn, not ${failOn}`);
    const timeoutMs = parseDuration(values.timeout ?? "2h");
    const intervalMs = Math.max(1e3, parseDuration(values.interval ?? "30s"));
    const q = `site_id=${encodeURIComponent(site)}`;
    const fetchDeploy = async () => {
      if (values.deploy)
        return call(io, base, key, "GET", `/v1/query/deploys/${encodeURIComponent(values.deploy)}?${q}`);
      const list = await call(
        io,
        base,
        key,
        "GET",
        `/v1/query/deploys?${q}&environment=${environment}&limit=100`
      );
      const found = list.deploys.find((d2) => d2.version === values.version);
      if (!found) throw new ApiError(`no ${environment} deploy with version ${values.version} among the latest 100`);
      return found;
    };
    const started = io.now();
    let d = await fetchDeploy();
    while (d.verdict === "WARN" && io.now() - started < timeoutMs) {
      io.err(`waiting (${Math.round((io.now() - started) / 1e3)}s): ${d.verdict} \u2014 ${d.verdict_reasons.join("; ")}`);
      await io.sleep(Math.min(intervalMs, Math.max(0, timeoutMs - (io.now() - started))));
      d = await fetchDeploy();
    }
    io.out(
      `${d.verdict}: deploy ${d.id} version ${d.version} (${d.environment}), confusion ${d.confusion_before} \u2192 ${d.confusion_after ?? "n/a"} (delta ${d.delta ?? "n/a"})`
    );
    for (const r of d.verdict_reasons) io.out(`  - ${r}`);
    for (const r of d.related_issues) io.out(`  ${r.relation}: ${r.title}`);
    if (d.verdict === "FAIL") return 1;
    if (d.verdict === "WARN") return failOn === "warn" ? 1 : 0;
    return 0;
  } catch (err) {
    if (err instanceof UsageError || err.code?.startsWith?.("ERR_PARSE_ARGS")) {
      io.err(`friction deploy: ${err.message}

${DEPLOY_USAGE}`);
      return 2;
    }
    if (err instanceof ApiError) {
      io.err(`friction deploy: ${err.message}`);
      return 2;
    }
    throw err;
  }
}

// cli/doctor.ts
import { parseArgs as parseArgs2 } from "node:util";
var DOCTOR_USAGE = `friction doctor [--base-url URL] [--key KEY] [--site ID]

Checks that the service answers and which version it runs, that the key is accepted, and that it may read the
site's deploys. Exit 0 when every check passed, 1 when one failed, 2 on usage errors.`;
async function get(io, url, key) {
  try {
    const res = await io.fetch(url, {
      headers: key ? { authorization: `Bearer ${key}` } : {},
      signal: AbortSignal.timeout(1e4)
    });
    const text = await res.text();
    let body;
    try {
      body = JSON.parse(text);
    } catch {
      body = void 0;
    }
    return { status: res.status, body };
  } catch (err) {
    return { error: unreachable(err) };
  }
}
function compatible(a, b) {
  const [am, an] = a.split(".").map(Number);
  const [bm, bn] = b.split(".").map(Number);
  return am === bm && (am !== 0 || an === bn);
}
async function runDoctorCommand(argv, io, cliVersion) {
  let values;
  try {
    ({ values } = parseArgs2({
      args: [...argv],
      strict: true,
      options: {
        "base-url": { type: "string" },
        key: { type: "string" },
        site: { type: "string" },
        help: { type: "boolean" }
      }
    }));
  } catch (err) {
    io.err(`friction doctor: ${err.message}

${DOCTOR_USAGE}`);
    return 2;
  }
  if (values.help) {
    io.out(DOCTOR_USAGE);
    return 0;
  }
  const base = (values["base-url"] ?? io.env.FRICTION_BASE_URL)?.replace(/\/+$/, "");
  const key = values.key ?? io.env.FRICTION_SECRET_KEY;
  const site = values.site ?? io.env.FRICTION_SITE_ID;
  if (!base || !/^https?:\/\//.test(base)) {
    io.err(
      `friction doctor: --base-url (or FRICTION_BASE_URL) must be an http(s) URL${base ? `, not ${base}` : ""}

${DOCTOR_USAGE}`
    );
    return 2;
  }
  const checks = [];
  const health = await get(io, `${base}/healthz`);
  if (!("error" in health) && health.body?.data?.status === "starting") {
    checks.push({ ok: false, line: `service: ${base} is still starting: try again in a few seconds` });
  } else if ("error" in health || health.status !== 200 || health.body?.data?.status !== "ok") {
    checks.push({
      ok: false,
      line: `service: ${base} does not answer /healthz (${"error" in health ? health.error : `HTTP ${health.status}`})`
    });
  } else {
    const version = health.body.data.version;
    checks.push({ ok: true, line: `service: ${base} answers (role ${health.body.data.role})` });
    if (!version)
      checks.push({
        ok: false,
        line: "version: the service does not say its version (older than this CLI): upgrade it"
      });
    else
      checks.push(
        compatible(version, cliVersion) ? { ok: true, line: `version: service ${version}, CLI ${cliVersion}` } : {
          ok: false,
          line: `version: service ${version} and CLI ${cliVersion} differ in a breaking way: install the CLI of the service's version`
        }
      );
  }
  if (!key) checks.push({ ok: false, line: "key: none given (--key or FRICTION_SECRET_KEY)" });
  else if (checks[0].ok) {
    if (!key.startsWith("svc_sec_"))
      checks.push({ ok: false, line: `key: ${key.slice(0, 8)}\u2026 is not a secret key (svc_sec_\u2026): deploys need one` });
    const r = await get(
      io,
      `${base}/v1/query/deploys?limit=1${site ? `&site_id=${encodeURIComponent(site)}` : ""}`,
      key
    );
    const code = "error" in r ? r.error : `${r.status} ${r.body?.error?.code ?? ""}`.trim();
    if ("error" in r) checks.push({ ok: false, line: `key: the check failed (${code})` });
    else if (r.status === 401) checks.push({ ok: false, line: `key: refused (${code}): unknown or revoked` });
    else if (r.status === 403)
      checks.push({ ok: false, line: `key: accepted but may not read deploys (${code}: it needs query:read)` });
    else if (!site)
      checks.push(
        r.status === 400 ? { ok: true, line: "key: accepted (give --site or FRICTION_SITE_ID to check the site too)" } : { ok: false, line: `key: unexpected answer ${code}` }
      );
    else if (r.status === 200)
      checks.push({
        ok: true,
        line: `key: accepted; site ${site}: readable (${r.body?.data?.total ?? 0} deploys recorded)`
      });
    else if (r.status === 404 || r.status === 400)
      checks.push({ ok: false, line: `site: ${site} is not a site this key may read (${code})` });
    else checks.push({ ok: false, line: `key: unexpected answer ${code}` });
  }
  for (const c of checks) io.out(`${c.ok ? "ok  " : "FAIL"} ${c.line}`);
  return checks.every((c) => c.ok) ? 0 : 1;
}

// cli/mcp.ts
import { createInterface } from "node:readline";
var MCP_USAGE = `friction mcp --url <base URL> --key <svc_mcp_\u2026 key>   (or env FRICTION_URL, FRICTION_KEY)

Serves MCP over stdio for a desktop assistant, forwarding every message to <base URL>/v1/mcp with the key.
Logs go to stderr; stdout carries only MCP messages.`;
function mcpEndpoint(base) {
  const u = new URL(base);
  const path = u.pathname.replace(/\/+$/, "").replace(/\/v1$/, "");
  return new URL(`${path}/v1/mcp`, u.origin);
}
function parseArgs3(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const [flag, inline] = a.startsWith("--") && a.includes("=") ? [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)] : [a, void 0];
    if (flag === "--help" || flag === "-h") out.help = true;
    else if (flag === "--url" || flag === "--key") {
      const v = inline ?? argv[++i];
      if (v === void 0) return { bad: `${flag} needs a value` };
      if (flag === "--url") out.url = v;
      else out.key = v;
    } else return { bad: `unknown option ${a}` };
  }
  return out;
}
function messagesOf(contentType, text) {
  if (contentType.includes("text/event-stream")) {
    return text.split(/\r?\n\r?\n/).map(
      (ev) => ev.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n")
    ).filter((d) => d !== "").flatMap((d) => [JSON.parse(d)].flat());
  }
  return text.trim() === "" ? [] : [JSON.parse(text)].flat();
}
async function runMcpCommand(argv, io, input = process.stdin) {
  const say = (line) => io.err(`friction mcp: ${line}`);
  const args = parseArgs3(argv);
  if (args.help) {
    io.err(MCP_USAGE);
    return 0;
  }
  const base = args.url ?? io.env.FRICTION_URL;
  const key = args.key ?? io.env.FRICTION_KEY;
  const problem = args.bad ?? (!base ? "--url (or FRICTION_URL) is required" : !/^https?:\/\//.test(base) ? `--url must be an http(s) URL: ${base}` : !key ? "--key (or FRICTION_KEY) is required" : void 0);
  if (problem) {
    say(`${problem}

${MCP_USAGE}`);
    return 2;
  }
  const endpoint = mcpEndpoint(base);
  let protocolVersion;
  const write = (m) => process.stdout.write(`${JSON.stringify(m)}
`);
  const failed = (m, why) => {
    say(`${endpoint.href}: ${why}`);
    if (m.method !== void 0 && m.id !== void 0 && m.id !== null) {
      write({
        jsonrpc: "2.0",
        id: m.id,
        error: { code: -32e3, message: `Friction at ${endpoint.origin} did not answer: ${why}` }
      });
    }
  };
  async function forward(m) {
    let res;
    try {
      res = await io.fetch(endpoint, {
        method: "POST",
        headers: {
          authorization: `Bearer ${key}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...protocolVersion ? { "mcp-protocol-version": protocolVersion } : {}
        },
        body: JSON.stringify(m),
        signal: AbortSignal.timeout(6e4)
      });
    } catch (err) {
      failed(m, unreachable(err));
      return;
    }
    const text = await res.text();
    let answers;
    try {
      answers = messagesOf(res.headers.get("content-type") ?? "", text);
    } catch {
      failed(m, `HTTP ${res.status} with a body that is not JSON-RPC`);
      return;
    }
    const rpc = answers.filter((a) => a && a.jsonrpc === "2.0");
    if (!res.ok && !rpc.some((a) => a.id !== void 0 && a.id === m.id)) {
      failed(m, `HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ""}`);
      return;
    }
    for (const a of rpc) {
      const v = a.result?.protocolVersion;
      if (typeof v === "string") protocolVersion = v;
      write(a);
    }
  }
  say(`serving MCP on stdio, forwarding to ${endpoint.href}`);
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    if (line.trim() === "") continue;
    let parsed;
    try {
      parsed = JSON.parse(line);
    } catch {
      say("stdin: a line that is not JSON was skipped");
      continue;
    }
    for (const m of [parsed].flat()) await forward(m);
  }
  return 0;
}

// cli/commands.ts
var COMMANDS = {
  deploy: {
    summary: "record a deploy, or wait for its verdict and gate on it (friction deploy --help)",
    run: (argv, io) => runDeployCommand(argv, io)
  },
  doctor: {
    summary: "check the service, its version, the key and the site",
    run: (argv, io) => runDoctorCommand(argv, io, package_default.version)
  },
  mcp: {
    summary: "MCP over stdio for a desktop assistant, forwarding to the service (friction mcp --help)",
    run: (argv, io) => runMcpCommand(argv, io)
  }
};
var usage = () => `friction ${package_default.version}: the Friction command line

Usage: friction <command> [options]

${Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(8)} ${c.summary}`).join("\n")}

  --version  print the version
  --help     this help

Environment: FRICTION_BASE_URL, FRICTION_SECRET_KEY, FRICTION_SITE_ID (or --base-url, --key, --site);
for mcp: FRICTION_URL, FRICTION_KEY (or --url, --key).`;
async function main(argv, io = defaultIo) {
  const [name, ...rest] = argv;
  if (name === "--version" || name === "-v") {
    io.out(package_default.version);
    return 0;
  }
  if (name === "--help" || name === "-h" || name === "help") {
    io.out(usage());
    return 0;
  }
  const command = name === void 0 ? void 0 : COMMANDS[name];
  if (!command) {
    io.err(`${name === void 0 ? "friction: missing command" : `friction: unknown command ${name}`}

${usage()}`);
    return 2;
  }
  try {
    return await command.run(rest, io);
  } catch (err) {
    io.err(`friction ${name}: ${err.message}`);
    return 2;
  }
}

// cli/main.ts
process.exitCode = await main(process.argv.slice(2));
