"""Runs the same unchanged clients against LLMock (PyPI llmock 0.2.2) and
against retrylab's `chaos run`, one fault at a time, and prints what each
tool saw and judged: attempts, the client's outcome, LLMock's verdict codes
and retrylab's findings. docs/llmock.md reads its output.

    bash bench/llmock/compare.sh [--out DIR] [--only CASE,...] [--clients C,...]

Run by compare.sh with testdata/python/llmock/.venv/bin/python (LLMock is
imported, in-process, as its own pytest fixture does: llmock.testing.
LLMockServer on 127.0.0.1, an OS-chosen port). Clients are subprocesses in
their own process group, killed (the group) when they overrun their
deadline; the LLMock server thread stops at the end. retrylab runs the
equivalent scenarios, generated into OUT/scenarios/, with `retrylab chaos
run` (its mock and embedded proxy on loopback; it kills its clients).
Loopback only: every client gets dummy keys and a 127.0.0.1 base URL.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from llmock.ratelimit import LimitSettings
from llmock.scenarios import Fail, StreamFault
from llmock.testing import LLMockServer
from llmock.verdict import judge

ROOT = Path(__file__).resolve().parents[2]
SDK_PY = ROOT / "testdata/python/sdk/.venv/bin/python"
NODE_DIR = ROOT / "testdata/sdk/node"

# The clients retrylab's own scenarios run (scenarios/sdk), unchanged.
CLIENTS = {
    "openai-python": {
        "provider": "openai",
        "cmd": [str(SDK_PY), str(ROOT / "testdata/python/clients/openai_client.py")],
        "requires": SDK_PY,
    },
    "anthropic-python": {
        "provider": "anthropic",
        "cmd": [str(SDK_PY), str(ROOT / "testdata/python/clients/anthropic_client.py")],
        "requires": SDK_PY,
    },
    "genai-python": {
        "provider": "gemini",
        "cmd": [str(SDK_PY), str(ROOT / "testdata/python/clients/genai_client.py")],
        "requires": SDK_PY,
    },
    "openai-node": {
        "provider": "openai",
        "cmd": ["node", str(NODE_DIR / "openai.mjs")],
        "requires": NODE_DIR / "node_modules/openai",
    },
}

# Each case: the LLMock behaviours (llmock.scenarios, as its pytest fixture
# queues them) and the retrylab attempts that put the same fault on the
# wire, as close to byte for byte as the two tools allow (docs/llmock.md).
# `clients` limits a case; `requests` is RETRYLAB_REQUESTS; `deadline` the
# wall-clock limit of a client (LLMock: the harness kills it; retrylab:
# expect.maxDuration, which is its kill deadline too).
CASES = [
    {
        "name": "429-retry-after-1s-twice",
        "what": "two 429s with Retry-After: 1 (and retry-after-ms: 1000), then the answer",
        "llmock": lambda: [Fail(429, retry_after=1.0, times=2)],
        "retrylab": [{"status": 429, "retryAfter": "1", "headers": {"retry-after-ms": "1000"}}] * 2,
    },
    {
        "name": "503-steady",
        "what": "503 on every attempt (LLMock adds Retry-After: 1 to a 503 it is not told otherwise; so does retrylab here)",
        "llmock": lambda: [Fail(503, times=None)],
        "retrylab": [{"status": 503, "retryAfter": "1", "headers": {"retry-after-ms": "1000"}}] * 6,
    },
    {
        "name": "500-steady-no-retry-after",
        "what": "500 on every attempt, no Retry-After: the SDK's own backoff",
        "llmock": lambda: [Fail(500, times=None)],
        "retrylab": [{"status": 500}] * 6,
    },
    {
        "name": "400-once",
        "what": "a 400: not retryable",
        "llmock": lambda: [Fail(400, times=1)],
        "retrylab": [{"status": 400}],
    },
    {
        "name": "400-then-a-new-request",
        "what": "two logical requests with the same prompt; the first meets a 400 (the client gives up), the second succeeds",
        "requests": 2,
        "llmock": lambda: [Fail(400, times=1)],
        "retrylab": [{"status": 400}],
    },
    {
        "name": "429-retry-after-150s",
        "what": "a 429 with Retry-After: 150 (retry-after-ms: 150000), above the Python SDKs' caps (anthropic 60 s: own backoff; openai 120 s: no retry)",
        # openai-node 6.x sleeps whatever Retry-After says (client.js retryRequest): 150 s; left out.
        "clients": ["openai-python", "anthropic-python"],
        "llmock": lambda: [Fail(429, retry_after=150.0, times=1)],
        "retrylab": [{"status": 429, "retryAfter": "150", "headers": {"retry-after-ms": "150000"}}],
    },
    {
        "name": "disconnect-after-2-events",
        "what": "the connection dropped after 2 stream events (no chunked terminator)",
        "llmock": lambda: [StreamFault("disconnect", after_chunks=2)],
        "retrylab": [{"drop": {"afterEvents": 2}}],
    },
    {
        "name": "truncate-after-2-events",
        "what": "a clean end after 2 events: no finish reason, no [DONE] / message_stop",
        "llmock": lambda: [StreamFault("truncate", after_chunks=2)],
        "retrylab": [{"truncate": {"afterEvents": 2}}],
    },
    {
        "name": "malformed-after-2-events",
        "what": "the 3rd event's JSON cut in half (LLMock then sends the rest of the stream; retrylab ends it)",
        "llmock": lambda: [StreamFault("malformed", after_chunks=2)],
        "retrylab": [{"malformed": {"afterEvents": 2}}],
    },
    {
        "name": "stall-after-2-events",
        "what": "silence after 2 events: LLMock resumes after 3 s; retrylab never resumes (the client is stopped at 20 s)",
        "deadline": 20,
        "llmock": lambda: [StreamFault("stall", after_chunks=2, stall_seconds=3.0)],
        "retrylab": [{"stall": {"afterEvents": 2, "keepalive": "0s"}}],
    },
    {
        "name": "quota-rpm-30-burst-31",
        "what": "31 requests against a quota of 30 a minute per key (LLMock --rpm 30): the 31st gets a 429 with the bucket's true wait (about 2 s); retrylab has no quota",
        "clients": ["openai-python", "anthropic-python"],
        "requests": 31,
        "limits": {"rpm": 30},
        "llmock": lambda: [],
        "retrylab": None,
    },
    {
        "name": "stall-outlives-client",
        "what": "silence after 2 events for 30 s, longer than the client is given (8 s): it is stopped mid-stall",
        "deadline": 8,
        # Node starts in well under a second; the Python SDKs take 1-5 s to import on a loaded machine.
        "clients": ["openai-node"],
        "llmock": lambda: [StreamFault("stall", after_chunks=2, stall_seconds=30.0)],
        "retrylab": [{"stall": {"afterEvents": 2, "keepalive": "0s"}}],
    },
]

DUMMY_KEY = "llmock-compare-key"


def run_client(cmd: list[str], env: dict[str, str], deadline: float) -> tuple[int | None, float, str, str]:
    """Runs one client in its own process group; kills the group at the deadline."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=ROOT, start_new_session=True, text=True)
    try:
        out, err = proc.communicate(timeout=deadline)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        code = None
    return code, time.monotonic() - start, out, err


def llmock_side(server: LLMockServer, client: dict, case: dict) -> dict:
    state = server.state
    state.reset()
    state.limiter.configure(LimitSettings(**case.get("limits", {})))  # none unless the case sets one
    behaviours = case["llmock"]()
    if behaviours:
        state.scenarios.add(*behaviours)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "OPENAI_BASE_URL": server.base_url("openai"),
        "OPENAI_API_KEY": DUMMY_KEY,
        "ANTHROPIC_BASE_URL": server.base_url("anthropic"),
        "ANTHROPIC_API_KEY": DUMMY_KEY,
        "GOOGLE_GEMINI_BASE_URL": server.base_url("gemini"),
        "GEMINI_API_KEY": DUMMY_KEY,
        # google-genai 3.6.1 calls /v1/models/... by default (_api_client.py:
        # GOOGLE_AI_API_DEFAULT_VERSION); LLMock serves Gemini at /gemini/v1beta only
        # (routers/gemini.py) and answers 404 without this (docs/llmock.md).
        "GOOGLE_GENAI_API_VERSION": "v1beta",
        "RETRYLAB_REQUESTS": str(case.get("requests", 1)),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    code, secs, out, err = run_client(client["cmd"], env, case.get("deadline", 60))
    records = state.journal.records(wait=2.0)
    verdict = judge(records)
    return {
        "exit": code,
        "seconds": round(secs, 2),
        "attempts": len(records),
        "calls": len(verdict.calls),
        "gaps": [round(b.started_at - a.ended_at, 3) for a, b in zip(records, records[1:])],
        "faults": [r.fault for r in records],
        "retryAfter": [r.retry_after for r in records],
        "statuses": [r.status for r in records],
        "findings": [f"{f.code}({f.severity})" for f in verdict.findings],
        "verdict": verdict.to_dict(),
        "stderr": err.strip().splitlines()[-1:] if err.strip() else [],
    }


def scenario_yaml(client_name: str, client: dict, case: dict) -> str:
    """A retrylab scenario with the case's fault and no expectation but a deadline."""
    doc = {
        "name": f"{case['name']}--{client_name}",
        "description": case["what"],
        "provider": client["provider"],
        "client": {"command": client["cmd"]},
        "requests": case.get("requests", 1),
        "attempts": case["retrylab"],
        "expect": {"maxDuration": f"{case.get('deadline', 60)}s"},
    }
    # JSON is YAML: no YAML library is needed in the LLMock venv.
    return json.dumps(doc, indent=2) + "\n"


def retrylab_side(retrylab: str, out: Path, jobs: list[tuple[str, dict, dict]]) -> dict[str, dict]:
    scen = out / "scenarios"
    scen.mkdir(parents=True, exist_ok=True)
    for client_name, client, case in jobs:
        if case["retrylab"] is not None:  # None: a fault retrylab cannot send
            (scen / f"{case['name']}--{client_name}.yaml").write_text(scenario_yaml(client_name, client, case))
    runs = out / "retrylab-runs"
    # --confirm 0: one run each, like the LLMock side; --parallel 2 on a 2-core machine.
    proc = subprocess.run([retrylab, "chaos", "run", "--out", str(runs), "--confirm", "0",
                           "--parallel", "2", "--format", "json", str(scen)],
                          cwd=ROOT, capture_output=True, text=True, start_new_session=True)
    (out / "retrylab-stderr.txt").write_text(proc.stderr)
    try:
        summary = json.loads(proc.stdout)
    except ValueError:
        sys.exit(f"retrylab chaos run printed no JSON (exit {proc.returncode}); see {out}/retrylab-stderr.txt")
    results = {}
    for s in summary.get("scenarios", []):
        res_file = Path(s.get("dir", "")) / "result.json"
        res = json.loads(res_file.read_text()) if res_file.is_file() else s
        results[s["name"]] = {
            "verdict": res.get("verdict"),
            "outcome": res.get("outcome"),
            "exit": res.get("exitCode"),
            "attempts": res.get("attempts"),
            "serverWaitsMs": (res.get("delaysMs") or {}).get("server"),
            "findings": [f["code"] for f in res.get("findings") or []],
            "evidence": [f"{f['code']}: {f.get('evidence', '')}" for f in res.get("findings") or []],
            "failureTypes": res.get("failureTypes"),
        }
    return results


# -- wire formats: the same request to both mocks, the answers kept as sent --

WIRE_REQUESTS = {
    # name: (LLMock path, retrylab path, retrylab provider, body, headers)
    "openai-stream": ("/v1/chat/completions", "/v1/chat/completions", "openai",
                      {"model": "gpt-4o-mini", "stream": True,
                       "messages": [{"role": "user", "content": "Say hello."}]},
                      {"authorization": "Bearer " + DUMMY_KEY}),
    "anthropic-stream": ("/anthropic/v1/messages", "/v1/messages", "anthropic",
                         {"model": "claude-haiku-4-5", "max_tokens": 64, "stream": True,
                          "messages": [{"role": "user", "content": "Say hello."}]},
                         {"x-api-key": DUMMY_KEY, "anthropic-version": "2023-06-01"}),
    "responses-stream": ("/v1/responses", "/v1/responses", "openai-responses",
                         {"model": "gpt-4o-mini", "stream": True, "input": "Say hello."},
                         {"authorization": "Bearer " + DUMMY_KEY}),
    "gemini-stream": ("/gemini/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
                      "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", "gemini",
                      {"contents": [{"role": "user", "parts": [{"text": "Say hello."}]}]},
                      {"x-goog-api-key": DUMMY_KEY}),
}


def raw_post(port: int, path: str, body: dict, headers: dict[str, str], extra: dict[str, str] | None = None) -> bytes:
    """The response as it came off the socket (status line, headers, chunked body)."""
    import socket

    data = json.dumps(body).encode()
    head = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Content-Type: application/json",
            f"Content-Length: {len(data)}", "Connection: close"]
    head += [f"{k}: {v}" for k, v in {**headers, **(extra or {})}.items()]
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + data)
        chunks = []
        while True:
            got = sock.recv(65536)
            if not got:
                break
            chunks.append(got)
    return b"".join(chunks)


def capture_wire(server: LLMockServer, retrylab: str, out: Path) -> None:
    wire = out / "wire"
    wire.mkdir(parents=True, exist_ok=True)
    for name, (lpath, _, _, body, headers) in WIRE_REQUESTS.items():
        (wire / f"llmock-{name}.http").write_bytes(raw_post(server.port, lpath, body, headers))
    lpath, _, _, body, headers = WIRE_REQUESTS["openai-stream"]
    (wire / "llmock-openai-429.http").write_bytes(
        raw_post(server.port, lpath, body, headers, {"x-llmock-force-status": "429"}))
    lpath, _, _, body, headers = WIRE_REQUESTS["anthropic-stream"]
    for status in ("429", "529"):
        (wire / f"llmock-anthropic-{status}.http").write_bytes(
            raw_post(server.port, lpath, body, headers, {"x-llmock-force-status": status}))
    # retrylab: chaos serve with an ok answer, then a 429, per format; its mock's own port.
    for name, (_, rpath, provider, body, headers) in WIRE_REQUESTS.items():
        scen = wire / f"serve-{provider}.yaml"
        scen.write_text(json.dumps({"description": "wire capture", "provider": provider,
                                    "attempts": [{"ok": {}}, {"status": 429, "retryAfter": "1"}]}) + "\n")
        log = open(wire / f"serve-{provider}.log", "w+")
        proc = subprocess.Popen([retrylab, "chaos", "serve", "--scenario", str(scen),
                                 "--journal", str(wire / f"serve-{provider}.jsonl")],
                                cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            port = None
            for _ in range(200):
                log.seek(0)
                text = log.read()
                if "mock http://127.0.0.1:" in text:
                    port = int(text.split("mock http://127.0.0.1:")[1].split(",")[0].split()[0])
                    break
                time.sleep(0.05)
            if port is None:
                raise RuntimeError(f"retrylab chaos serve printed no mock URL; see {log.name}")
            (wire / f"retrylab-{name}.http").write_bytes(raw_post(port, rpath, body, headers))
            err = raw_post(port, rpath, body, headers)
            (wire / f"retrylab-{provider}-429.http").write_bytes(err)
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            log.close()


def parse_http(raw: bytes) -> tuple[str, dict[str, str], list[tuple[str | None, str]]]:
    """Status line, headers (lower-cased), and the SSE events (event name, data) of a response."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    if headers.get("transfer-encoding") == "chunked":
        out, rest = b"", body
        while rest:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0] or b"0", 16)
            if size == 0:
                break
            out, rest = out + rest[:size], rest[size + 2:]
        body = out
    events = []
    for block in body.decode("utf-8", "replace").split("\n\n"):
        name, data = None, []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip(" "))
        if data:
            events.append((name, "\n".join(data)))
    if not events and body:
        events.append((None, body.decode("utf-8", "replace")))
    return lines[0], headers, events


def keys(data: str) -> str:
    try:
        obj = json.loads(data)
    except ValueError:
        return data[:20]
    if isinstance(obj, dict):
        return ",".join(obj.keys())
    return type(obj).__name__


def paths(data: str) -> set[str]:
    """Every key path of an event's JSON (lists read through), e.g. choices.delta.content."""
    try:
        obj = json.loads(data)
    except ValueError:
        return set()
    out: set[str] = set()

    def walk(v, prefix: str) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                out.add(prefix + k)
                walk(x, prefix + k + ".")
        elif isinstance(v, list):
            for x in v:
                walk(x, prefix)

    walk(obj, "")
    return out


def runs(names: list[str]) -> str:
    """['a', 'b', 'b', 'b'] as 'a, b×3'."""
    out: list[list] = []
    for n in names:
        if out and out[-1][0] == n:
            out[-1][1] += 1
        else:
            out.append([n, 1])
    return ", ".join(n if c == 1 else f"{n}×{c}" for n, c in out)


def wire_summary(wire: Path) -> str:
    """Markdown: per format, how LLMock's bytes differ from retrylab's."""
    out = []
    pairs = [(n, f"llmock-{n}.http", f"retrylab-{n}.http") for n in WIRE_REQUESTS]
    pairs += [("openai-429", "llmock-openai-429.http", "retrylab-openai-429.http"),
              ("anthropic-429", "llmock-anthropic-429.http", "retrylab-anthropic-429.http")]
    for name, lf, rf in pairs:
        if not (wire / lf).is_file() or not (wire / rf).is_file():
            continue
        ls, lh, le = parse_http((wire / lf).read_bytes())
        rs, rh, re_ = parse_http((wire / rf).read_bytes())
        out.append(f"### {name}")
        out.append(f"- status: LLMock `{ls}`, retrylab `{rs}`")
        out.append(f"- headers only LLMock sends: {sorted(set(lh) - set(rh))}")
        out.append(f"- headers only retrylab sends: {sorted(set(rh) - set(lh))}")
        lnames = [n or keys(d) for n, d in le]
        rnames = [n or keys(d) for n, d in re_]
        out.append(f"- LLMock events ({len(le)}): {runs(lnames)}")
        out.append(f"- retrylab events ({len(re_)}): {runs(rnames)}")
        lp: dict[str, set[str]] = {}
        rp: dict[str, set[str]] = {}
        for evs, acc in ((le, lp), (re_, rp)):
            for n, d in evs:
                acc.setdefault(n or "data", set()).update(paths(d))
        for ev in sorted(set(lp) & set(rp)):
            only_l, only_r = sorted(lp[ev] - rp[ev]), sorted(rp[ev] - lp[ev])
            if only_l or only_r:
                out.append(f"- `{ev}` key paths only LLMock: {only_l}; only retrylab: {only_r}")
        out.append("")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "runs/llmock-compare"))
    ap.add_argument("--only", default="", help="comma-separated case names")
    ap.add_argument("--clients", default="", help="comma-separated client names")
    ap.add_argument("--retrylab", default=os.environ.get("RETRYLAB", "retrylab"))
    ap.add_argument("--wire", action="store_true",
                    help="only capture one stream and one error of each format from both mocks into OUT/wire/")
    args = ap.parse_args()

    out = Path(args.out) / time.strftime("%Y-%m-%dT%H-%M-%SZ", time.gmtime())
    out.mkdir(parents=True)
    only = set(filter(None, args.only.split(",")))
    want = set(filter(None, args.clients.split(",")))
    jobs = []
    for case in CASES:
        if only and case["name"] not in only:
            continue
        for name, client in CLIENTS.items():
            if want and name not in want:
                continue
            if "clients" in case and name not in case["clients"]:
                continue
            if not Path(client["requires"]).exists():
                print(f"skip {name}: {client['requires']} missing", file=sys.stderr)
                continue
            jobs.append((name, client, case))

    if args.wire:
        with LLMockServer() as server:
            capture_wire(server, args.retrylab, out)
        print(wire_summary(out / "wire"))
        print(f"wire captures: {out}/wire", file=sys.stderr)
        return

    rows: dict[str, dict] = {}
    with LLMockServer() as server:
        for name, client, case in jobs:
            key = f"{case['name']}--{name}"
            print(f"llmock   {key} ...", file=sys.stderr, flush=True)
            rows[key] = {"case": case["name"], "client": name, "what": case["what"],
                         "llmock": llmock_side(server, client, case)}
    print("retrylab chaos run ...", file=sys.stderr, flush=True)
    for key, res in retrylab_side(args.retrylab, out, jobs).items():
        if key in rows:
            rows[key]["retrylab"] = res
    (out / "compare.json").write_text(json.dumps(rows, indent=2) + "\n")

    def outcome(code) -> str:
        return "killed" if code is None else ("ok" if code == 0 else f"exit {code}")

    print("| case | client | LLMock: attempts, client, verdict | retrylab: attempts, client, findings |")
    print("|---|---|---|---|")
    for key, row in rows.items():
        lm, rl = row["llmock"], row.get("retrylab", {})
        lm_f = ", ".join(lm["findings"]) or "PASS (none)"
        rl_f = ", ".join(rl.get("findings", [])) or "none"
        if not rl:
            print(f"| {row['case']} | {row['client']} | {lm['attempts']}, {outcome(lm['exit'])}, {lm_f} "
                  f"| — (no such fault) |")
            continue
        if rl.get("verdict") in (None, "skipped", "error", "interrupted"):
            rl_out = str(rl.get("verdict"))
        else:
            rl_out = outcome(rl.get("exit"))  # no exit code: stopped at its deadline
        print(f"| {row['case']} | {row['client']} | {lm['attempts']}, {outcome(lm['exit'])}, {lm_f} "
              f"| {rl.get('attempts', '?')}, {rl_out}, {rl_f} |")
    print(f"\nfull records: {out}/compare.json", file=sys.stderr)


if __name__ == "__main__":
    main()
