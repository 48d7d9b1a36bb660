"""retrylab's pytest plugin (entry point pytest11: retrylab).

    def test_openai_retries(retrylab_scenario):
        s = retrylab_scenario("scenarios/openai-503-then-ok.yaml")   # or a dict
        client = openai.OpenAI(base_url=s.env["OPENAI_BASE_URL"], api_key=s.env["OPENAI_API_KEY"])
        client.chat.completions.create(...)

retrylab_scenario(spec) starts `retrylab chaos serve` for the scenario
(spec: the path of a scenario file, or the same mapping inline) and returns
a Scenario whose .env holds what a client needs: the base URLs serve prints
(ANTHROPIC_BASE_URL, OPENAI_BASE_URL, GOOGLE_GEMINI_BASE_URL, the OTLP
receiver's OTEL_EXPORTER_OTLP_*) and placeholder keys (ANTHROPIC_API_KEY,
OPENAI_API_KEY, GEMINI_API_KEY, GOOGLE_API_KEY: the mock accepts any key).
When the test body returns, serve is stopped (SIGINT; CTRL_BREAK on Windows)
and its verdict asserted: a check that failed fails the test, with serve's
own lines (FAIL attempts: want 2, got 1 ...) in the message. Findings are
not failures (as in chaos run); expect.findings in the scenario makes them
checks. `pytest --retrylab-report DIR` keeps a run folder per scenario
(scenario.yaml, server.jsonl, verdict.txt, serve.log) and writes
DIR/report.html with `retrylab report html`. docs/python.md.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from retrylab import binary_path

KEYS = {
    "ANTHROPIC_API_KEY": "retrylab-test-key",
    "OPENAI_API_KEY": "retrylab-test-key",
    "GEMINI_API_KEY": "retrylab-test-key",
    "GOOGLE_API_KEY": "retrylab-test-key",
}

# How long serve may take to listen, and to print its verdict once stopped
# (it answers within a second; the margin is for a loaded CI machine).
START_TIMEOUT = float(os.environ.get("RETRYLAB_START_TIMEOUT", "60"))
STOP_TIMEOUT = float(os.environ.get("RETRYLAB_STOP_TIMEOUT", "60"))

_running = pytest.StashKey()


def pytest_addoption(parser):
    group = parser.getgroup("retrylab")
    group.addoption(
        "--retrylab-report",
        metavar="DIR",
        default=None,
        help="keep a run folder per retrylab scenario under DIR and write DIR/report.html",
    )


def pytest_configure(config):
    config.addinivalue_line("markers", "retrylab: a test that runs retrylab scenarios")


class Scenario:
    """One `retrylab chaos serve`, started by the retrylab_scenario fixture."""

    def __init__(self, name, path, folder, keep):
        self.name = name
        self.path = path  # the scenario file serve reads
        self.folder = folder  # run folder: server.jsonl, verdict.txt, serve.log
        self.env = {}
        self.returncode = None
        self.verdict = ""  # serve's verdict text, once stopped
        self.checks = []  # ("PASS"|"FAIL"|..., line) per check line
        self.findings = []  # the FINDING lines
        self._keep = keep
        self._proc = None
        self._log = None
        self._stopped = False
        self._said = False

    @property
    def passed(self):
        return self.returncode == 0

    def environ(self):
        """os.environ with .env over it, for a client run as a subprocess."""
        e = dict(os.environ)
        e.update(self.env)
        return e

    def _start(self):
        envfile = os.path.join(self.folder, "client.env")
        args = [
            binary_path(),
            "chaos",
            "serve",
            "--scenario",
            self.path,
            "--env-file",
            envfile,
            "--journal",
            os.path.join(self.folder, "server.jsonl"),
        ]
        self._out = open(os.path.join(self.folder, "serve.out"), "w+b")
        self._log = open(os.path.join(self.folder, "serve.log"), "w+b")
        kw = {}
        if sys.platform == "win32":
            kw["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP
        self._proc = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=self._out, stderr=self._log, **kw
        )
        deadline = time.monotonic() + START_TIMEOUT
        while not os.path.exists(envfile):
            if self._proc.poll() is not None:
                self.returncode = self._proc.returncode
                self._said = True  # this failure is the test's; stop() adds nothing
                pytest.fail(
                    "retrylab chaos serve --scenario %s exited %d before listening:\n%s"
                    % (self.path, self.returncode, self._read(self._log)),
                    pytrace=False,
                )
            if time.monotonic() > deadline:
                self._kill()
                pytest.fail(
                    "retrylab chaos serve did not listen within %gs:\n%s"
                    % (START_TIMEOUT, self._read(self._log)),
                    pytrace=False,
                )
            time.sleep(0.01)
        with open(envfile) as f:
            for line in f:
                k, sep, v = line.rstrip("\n").partition("=")
                if sep:
                    self.env[k] = v
        self.env.update(KEYS)

    @staticmethod
    def _read(f):
        f.flush()
        f.seek(0)
        return f.read().decode("utf-8", "replace")

    def _kill(self):
        if self._proc and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()

    def stop(self):
        """Stops serve and reads its verdict; returns the failure message,
        or None when every check passed. Stopping twice is stopping once."""
        if self._stopped:
            return self._failure()
        self._stopped = True
        if self._proc is None:
            return None
        if self._proc.poll() is None:
            if sys.platform == "win32":
                self._proc.send_signal(signal.CTRL_BREAK_EVENT)
            else:
                self._proc.send_signal(signal.SIGINT)
            try:
                self._proc.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self._kill()
        self.returncode = self._proc.returncode
        out = self._read(self._out)
        # serve prints the KEY=VALUE lines first, then the verdict.
        self.verdict = "".join(
            l for l in out.splitlines(True) if not re.match(r"^[A-Z][A-Z0-9_]*=", l)
        )
        for line in self.verdict.splitlines():
            word = line.split(" ", 1)[0]
            if word in ("PASS", "FAIL", "INCONCLUSIVE", "UNVERIFIED", "SKIP"):
                self.checks.append((word, line))
            elif word == "FINDING":
                self.findings.append(line)
        with open(os.path.join(self.folder, "verdict.txt"), "w") as f:
            f.write(self.verdict)
        self._out.close()
        self._log.seek(0)
        log = self._log.read().decode("utf-8", "replace")
        self._log.close()
        self._logtext = log
        if not self._keep:
            shutil.rmtree(self.folder, ignore_errors=True)
        return self._failure()

    def _failure(self):
        if self.returncode == 0 or self._said:
            return None
        if self.returncode in (1,) and self.verdict:
            lines = [
                l
                for l in self.verdict.splitlines()
                if l.startswith(("FAIL ", "INCONCLUSIVE ", "  hint:", "FINDING ", "server saw"))
            ]
            return "retrylab scenario %s: a server-side check failed\n%s" % (
                self.name,
                "\n".join(lines),
            )
        return "retrylab chaos serve for %s exited %s:\n%s%s" % (
            self.name,
            self.returncode,
            self.verdict,
            getattr(self, "_logtext", ""),
        )


def _slug(s):
    s = re.sub(r"[^A-Za-z0-9_.-]+", "-", s).strip("-.")
    return s[:100] or "scenario"


def _spec_file(spec, item, folder):
    """The scenario file for spec: a path as it is (relative to the test's
    folder when it exists there, else to the current directory), a mapping
    written to folder/scenario.yaml (JSON is YAML)."""
    if isinstance(spec, (str, os.PathLike)):
        p = os.fspath(spec)
        if not os.path.isabs(p):
            beside = os.path.join(os.path.dirname(str(item.path)), p)
            p = beside if os.path.exists(beside) else os.path.abspath(p)
        if not os.path.isfile(p):
            pytest.fail("retrylab_scenario: no scenario file %s" % p, pytrace=False)
        shutil.copyfile(p, os.path.join(folder, "scenario.yaml"))
        return p
    if isinstance(spec, dict):
        path = os.path.join(folder, "scenario.yaml")
        with open(path, "w") as f:
            json.dump(spec, f, indent=2)
            f.write("\n")
        return path
    raise TypeError(
        "retrylab_scenario(spec): spec is a scenario file's path or a mapping, not %s"
        % type(spec).__name__
    )


@pytest.fixture
def retrylab_scenario(request):
    """retrylab_scenario(spec, name=None) -> Scenario: starts `retrylab chaos
    serve` for spec (a scenario file's path, or the mapping inline); serve is
    stopped and its verdict asserted when the test body returns."""
    report = request.config.getoption("retrylab_report")
    started = []
    request.node.stash[_running] = started
    tmp = None

    def start(spec, name=None):
        nonlocal tmp
        base = _slug(request.node.nodeid.replace("::", "-").replace("/", "-"))
        if name:
            base += "-" + _slug(name)
        if report:
            root = os.path.abspath(report)
        else:
            if tmp is None:
                tmp = tempfile.mkdtemp(prefix="retrylab-")
            root = tmp
        folder = os.path.join(root, base)
        n = 1
        while os.path.exists(folder):
            n += 1
            folder = os.path.join(root, "%s-%d" % (base, n))
        os.makedirs(folder)
        path = _spec_file(spec, request.node, folder)
        s = Scenario(name or base, path, folder, keep=bool(report))
        # A mapping's file is in the folder: keep it only with a report.
        started.append(s)
        s._start()
        return s

    yield start
    # The call hook stopped them when the body ran; this is for a failure
    # in setup, or a fixture used outside a test body.
    for s in started:
        s.stop()
    if tmp:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    # The verdict belongs to the test's call phase: a failed one makes the
    # test FAILED (not an error at teardown), with serve's own lines.
    try:
        res = yield
    except BaseException:
        # The test failed on its own: serve's verdict goes into its report.
        failures = _stop_all(item)
        if failures:
            item.add_report_section("call", "retrylab", "\n\n".join(failures))
        raise
    failures = _stop_all(item)
    if failures:
        pytest.fail("\n\n".join(failures), pytrace=False)
    return res


def _stop_all(item):
    return [m for m in (s.stop() for s in item.stash.get(_running, [])) if m]


def pytest_sessionfinish(session, exitstatus):
    report = session.config.getoption("retrylab_report")
    if not report or not os.path.isdir(report):
        return
    out = os.path.join(report, "report.html")
    try:
        r = subprocess.run(
            [binary_path(), "report", "html", report, "-o", out],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=120,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        session.config.get_terminal_writer().line("retrylab: report html: %s" % e)
        return
    tw = session.config.get_terminal_writer()
    if r.returncode == 0:
        tw.line("retrylab: run folders and %s" % out)
    else:
        tw.line("retrylab: report html failed: %s" % r.stdout.decode("utf-8", "replace"))
