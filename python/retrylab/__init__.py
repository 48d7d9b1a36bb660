"""retrylab: chaos tests for the retry logic of LLM clients.

The wheel carries the retrylab binary for its platform (retrylab/bin/);
the `retrylab` command runs it, and the pytest plugin (retrylab.pytest_plugin,
registered through the pytest11 entry point) starts `retrylab chaos serve`
for a test. docs/python.md.
"""

import os
import sys

__all__ = ["binary_path", "main"]


def binary_path():
    """The path of the retrylab binary: $RETRYLAB_BIN when set (a binary
    built from source, for instance), else the one this wheel carries."""
    env = os.environ.get("RETRYLAB_BIN")
    if env:
        return env
    name = "retrylab.exe" if sys.platform == "win32" else "retrylab"
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", name)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            "retrylab: no binary at %s: this is not a platform wheel of retrylab "
            "(install one for your platform, or set RETRYLAB_BIN)" % path
        )
    return path


def main():
    """The `retrylab` console entry point: runs the bundled binary with the
    same arguments, in place of this process where the OS allows it."""
    path = binary_path()
    args = [path] + sys.argv[1:]
    if sys.platform == "win32":
        # Windows has no exec: run it, pass Ctrl-C on, exit with its code.
        import subprocess

        proc = subprocess.Popen(args)
        while True:
            try:
                sys.exit(proc.wait())
            except KeyboardInterrupt:
                continue
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(path, args)
