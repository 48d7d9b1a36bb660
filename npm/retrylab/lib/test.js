// A test helper for Node's own test runner and Vitest (docs/npm.md):
//
//   import { withScenario } from "retrylab/test";
//   test("the SDK retries a 529", () =>
//     withScenario({ provider: "anthropic", attempts: [{ status: 529 }], expect: { attempts: 2 } }, async (s) => {
//       const client = new Anthropic({ baseURL: s.env.ANTHROPIC_BASE_URL, apiKey: s.env.ANTHROPIC_API_KEY });
//       await client.messages.create({ ... });
//     }));
//
// startScenario(spec) starts `retrylab chaos serve` for a scenario (spec: a
// scenario file's path, or the same mapping inline) and resolves once it
// listens, to a Scenario whose env holds the base URLs serve wrote
// (ANTHROPIC_BASE_URL, OPENAI_BASE_URL, GOOGLE_GEMINI_BASE_URL,
// OTEL_EXPORTER_OTLP_*) and placeholder keys. scenario.stop() stops serve
// (SIGINT) and resolves to its verdict; assertPassed() throws an
// AssertionError with serve's FAIL lines when a check failed. withScenario
// does all three around a function.
import { spawn } from "node:child_process";
import { AssertionError } from "node:assert";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, createWriteStream } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { binaryPath } from "./binary.js";

export const keys = {
  ANTHROPIC_API_KEY: "retrylab-test-key",
  OPENAI_API_KEY: "retrylab-test-key",
  GEMINI_API_KEY: "retrylab-test-key",
  GOOGLE_API_KEY: "retrylab-test-key",
};

const startTimeoutMs = Number(process.env.RETRYLAB_START_TIMEOUT ?? 60) * 1000;
const stopTimeoutMs = Number(process.env.RETRYLAB_STOP_TIMEOUT ?? 60) * 1000;

export class Scenario {
  constructor(name, folder, file, keep, child, out) {
    this.name = name; // for messages: options.name, the file's path, or "inline scenario"
    this.folder = folder; // run folder: scenario.yaml (inline), server.jsonl, serve.log, verdict.txt
    this.file = file;
    this.env = {};
    this.verdict = null;
    this._keep = keep;
    this._child = child;
    this._out = out;
    this._exit = new Promise((res) => child.on("exit", (code, signal) => res({ code, signal })));
  }

  /** process.env with env over it, for a client run as a child process. */
  environ() {
    return { ...process.env, ...this.env };
  }

  /** Stops serve and resolves to its verdict: { passed, code, text,
   * checks: [{state, line}], findings: [line] }. Stopping twice is
   * stopping once. */
  async stop() {
    if (this._stopping) return this._stopping;
    this._stopping = (async () => {
      if (this._child.exitCode === null && this._child.signalCode === null) {
        // On Windows node cannot send Ctrl-Break: kill ends serve without a
        // verdict there (docs/npm.md).
        this._child.kill("SIGINT");
      }
      let timer;
      const timeout = new Promise((res) => {
        timer = setTimeout(() => res(null), stopTimeoutMs);
      });
      let ended = await Promise.race([this._exit, timeout]);
      clearTimeout(timer);
      if (ended === null) {
        this._child.kill("SIGKILL");
        ended = await this._exit;
      }
      await new Promise((res) => this._out.stdout.end(res));
      await new Promise((res) => this._out.stderr.end(res));
      const out = readFileSync(join(this.folder, "serve.out"), "utf8");
      const log = readFileSync(join(this.folder, "serve.log"), "utf8");
      const text = out
        .split("\n")
        .filter((l) => !/^[A-Z][A-Z0-9_]*=/.test(l))
        .join("\n");
      writeFileSync(join(this.folder, "verdict.txt"), text);
      const checks = [];
      const findings = [];
      for (const line of text.split("\n")) {
        const word = line.split(" ", 1)[0];
        if (["PASS", "FAIL", "INCONCLUSIVE", "UNVERIFIED", "SKIP"].includes(word)) checks.push({ state: word, line });
        else if (word === "FINDING") findings.push(line);
      }
      this.verdict = { passed: ended.code === 0, code: ended.code, signal: ended.signal, text, log, checks, findings };
      if (!this._keep) rmSync(this.folder, { recursive: true, force: true });
      return this.verdict;
    })();
    return this._stopping;
  }

  /** Stops serve (if running) and throws an AssertionError with serve's
   * own lines when its verdict failed. */
  async assertPassed() {
    const v = await this.stop();
    if (v.passed) return v;
    let message;
    if (v.code === 1) {
      const lines = v.text
        .split("\n")
        .filter((l) => /^(FAIL |INCONCLUSIVE |  hint:|FINDING |server saw)/.test(l));
      message = `retrylab scenario ${this.name}: a server-side check failed\n${lines.join("\n")}`;
    } else {
      message = `retrylab chaos serve for ${this.name} exited ${v.code ?? v.signal}:\n${v.text}${v.log}`;
    }
    throw new AssertionError({ message });
  }
}

/**
 * Starts `retrylab chaos serve` for spec (a scenario file's path, or a
 * mapping written to the run folder as scenario.yaml: JSON is YAML).
 * options.reportDir: keep the run folder under it (else a temporary folder,
 * removed at stop); options.name: the run folder's name.
 */
export async function startScenario(spec, options = {}) {
  const keep = Boolean(options.reportDir ?? process.env.RETRYLAB_REPORT_DIR);
  const root = keep ? resolve(options.reportDir ?? process.env.RETRYLAB_REPORT_DIR) : mkdtempSync(join(tmpdir(), "retrylab-"));
  let folder = root;
  if (keep) {
    const base = (options.name ?? "scenario").replace(/[^A-Za-z0-9_.-]+/g, "-").slice(0, 100) || "scenario";
    folder = join(root, base);
    for (let n = 2; existsSync(folder); n++) folder = join(root, `${base}-${n}`);
  }
  mkdirSync(folder, { recursive: true });
  let file;
  if (typeof spec === "string" || spec instanceof URL) {
    file = spec instanceof URL ? spec.pathname : resolve(spec);
    if (!existsSync(file)) throw new Error(`retrylab: no scenario file ${file}`);
  } else if (spec && typeof spec === "object") {
    file = join(folder, "scenario.yaml");
    writeFileSync(file, JSON.stringify(spec, null, 2) + "\n");
  } else {
    throw new TypeError(`retrylab: a scenario is a file's path or a mapping, not ${typeof spec}`);
  }
  const envFile = join(folder, "client.env");
  const out = {
    stdout: createWriteStream(join(folder, "serve.out")),
    stderr: createWriteStream(join(folder, "serve.log")),
  };
  await Promise.all([new Promise((r) => out.stdout.on("open", r)), new Promise((r) => out.stderr.on("open", r))]);
  const child = spawn(
    options.binary ?? binaryPath(),
    ["chaos", "serve", "--scenario", file, "--env-file", envFile, "--journal", join(folder, "server.jsonl")],
    { stdio: ["ignore", out.stdout, out.stderr] },
  );
  const name = options.name ?? (typeof spec === "object" && !(spec instanceof URL) ? "inline scenario" : file);
  const s = new Scenario(name, folder, file, keep, child, out);
  const deadline = Date.now() + startTimeoutMs;
  while (!existsSync(envFile)) {
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      const v = await s.stop();
      throw new Error(`retrylab chaos serve --scenario ${file} did not start (exit ${v.code ?? v.signal}):\n${v.log}`);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  for (const line of readFileSync(envFile, "utf8").split("\n")) {
    const i = line.indexOf("=");
    if (i > 0) s.env[line.slice(0, i)] = line.slice(i + 1);
  }
  Object.assign(s.env, keys);
  return s;
}

/** Starts the scenario, runs fn(scenario), stops serve and asserts its
 * verdict. fn's own error wins (the verdict is attached as its cause). */
export async function withScenario(spec, fn, options = {}) {
  const s = await startScenario(spec, options);
  try {
    await fn(s);
  } catch (e) {
    const v = await s.stop();
    if (!v.passed && e && typeof e === "object" && !("retrylabVerdict" in e)) e.retrylabVerdict = v.text;
    throw e;
  }
  await s.assertPassed();
  return s.verdict;
}
