"""The request loop the retrylab chaos harness expects of an external client
(docs/chaos.md, "External clients"), shared by the Python SDK clients here.
Standard library only.

RETRYLAB_REQUESTS requests are made one after another, each through the SDK's
own default retry loop; one line per request goes to stdout; the exit code is
0 when every request succeeded, else 1. A failed request prints its error's
class and message to stderr (never the API key: the SDKs do not put it in
messages, and the harness redacts every output file anyway). No trace is
written: the SDKs do not expose how many attempts a request took, and
retrylab checks them from its own request journal (docs/sdk-clients.md).
"""

import os
import sys
import time


class IncompleteStreamError(Exception):
    """A stream that ended cleanly without its final event (what an
    application would check); the SDKs raise on a cut stream themselves, so
    this is a safety net."""


def requests():
    try:
        n = int(os.environ.get("RETRYLAB_REQUESTS", "1"))
    except ValueError:
        return 1
    return n if n > 0 else 1


def error_line(err):
    name = type(err).__name__
    msg = str(err)
    status = getattr(err, "status_code", None)
    if status is not None and str(status) not in msg:
        msg = f"status {status}: {msg}"
    cause = err.__cause__ or err.__context__
    if cause is not None:
        msg += f" (cause: {type(cause).__name__}: {cause})"
    return " ".join(f"{name}: {msg}".split())


def run(label, one):
    """Calls one(i) for i = 1..RETRYLAB_REQUESTS; one returns a short
    description of the answer or raises. Exits 0 when every request
    succeeded, 1 otherwise."""
    n = requests()
    failed = 0
    for i in range(1, n + 1):
        start = time.monotonic()
        try:
            what = one(i)
            ms = int((time.monotonic() - start) * 1000)
            print(f"{label} request {i}/{n}: ok in {ms}ms: {what}", flush=True)
        except KeyboardInterrupt:
            raise
        except Exception as err:  # noqa: BLE001 - every failure is reported
            failed += 1
            ms = int((time.monotonic() - start) * 1000)
            print(f"{label} request {i}/{n}: failed in {ms}ms", flush=True)
            print(f"{label} request {i}/{n}: {error_line(err)}", file=sys.stderr, flush=True)
    sys.exit(0 if failed == 0 else 1)


def stream_mode():
    """CLIENT_STREAM=0 makes the clients ask for a whole answer instead of a
    stream (the default is to stream)."""
    return os.environ.get("CLIENT_STREAM", "1") != "0"
