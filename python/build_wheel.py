"""Builds a platform wheel of retrylab carrying one binary (the ruff/uv
pattern), with the standard library only and no network:

    python3 python/build_wheel.py --binary PATH --goos linux --goarch amd64 \\
        --version 0.1.0 --out dist/

The wheel holds the package python/retrylab (the `retrylab` launcher and the
pytest plugin), the binary as retrylab/bin/retrylab[.exe] (mode 0755), and
the .dist-info: METADATA, WHEEL (Root-Is-Purelib: false, the platform tags),
entry_points.txt (console_scripts retrylab, pytest11 retrylab) and RECORD
(sha256 and size of every file). Entries are sorted and dated
SOURCE_DATE_EPOCH, so the same inputs give the same bytes.
"""

import argparse
import base64
import hashlib
import io
import os
import re
import sys
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))

# The tags a wheel of each Go platform carries. Go's linux binaries are
# static (CGO_ENABLED=0), so they run on glibc and musl alike: manylinux
# and musllinux in one compressed tag set. Go 1.26 needs macOS 12 or later
# (go.dev/doc/go1.25#darwin), so macosx_12_0, not 11_0: pip on macOS 11
# must not pick a binary that cannot start there.
TAGS = {
    ("linux", "amd64"): ["manylinux_2_17_x86_64", "manylinux2014_x86_64", "musllinux_1_1_x86_64"],
    ("linux", "arm64"): ["manylinux_2_17_aarch64", "manylinux2014_aarch64", "musllinux_1_1_aarch64"],
    ("darwin", "amd64"): ["macosx_12_0_x86_64"],
    ("darwin", "arm64"): ["macosx_12_0_arm64"],
    ("windows", "amd64"): ["win_amd64"],
    ("windows", "arm64"): ["win_arm64"],
}

SUMMARY = "Chaos tests for the retry logic of LLM clients: a mock Anthropic/OpenAI/Gemini server that injects 429s, 529s and dropped streams, and checks how your client retried"


def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def metadata(version):
    readme = open(os.path.join(HERE, "README.md"), encoding="utf-8").read()
    return (
        "Metadata-Version: 2.1\n"
        "Name: retrylab\n"
        "Version: %s\n"
        "Summary: %s\n"
        "Home-page: https://github.com/retrylab/retrylab\n"
        "Requires-Python: >=3.9\n"
        "Classifier: Framework :: Pytest\n"
        "Classifier: Programming Language :: Python :: 3\n"
        "Classifier: Programming Language :: Go\n"
        "Classifier: Topic :: Software Development :: Testing\n"
        "Description-Content-Type: text/markdown\n"
        "\n%s" % (version, SUMMARY, readme)
    )


def build(binary, goos, goarch, version, out):
    if (goos, goarch) not in TAGS:
        sys.exit("build_wheel: no wheel tags for %s/%s (known: %s)" % (goos, goarch, ", ".join("%s/%s" % k for k in TAGS)))
    if not re.fullmatch(r"\d+\.\d+\.\d+((a|b|rc)\d+|\.dev\d+)?", version):
        sys.exit("build_wheel: version %r is not of the form X.Y.Z, X.Y.ZrcN or X.Y.Z.devN" % version)
    tags = TAGS[(goos, goarch)]
    wheel_tag = "py3-none-" + ".".join(tags)
    name = "retrylab-%s-%s.whl" % (version, wheel_tag)
    distinfo = "retrylab-%s.dist-info" % version
    exe = "retrylab.exe" if goos == "windows" else "retrylab"

    files = []  # (archive name, bytes, mode)
    pkg = os.path.join(HERE, "retrylab")
    for fn in sorted(os.listdir(pkg)):
        if fn.endswith(".py"):
            with open(os.path.join(pkg, fn), "rb") as f:
                files.append(("retrylab/" + fn, f.read(), 0o644))
    with open(binary, "rb") as f:
        files.append(("retrylab/bin/" + exe, f.read(), 0o755))
    files.append((distinfo + "/METADATA", metadata(version).encode(), 0o644))
    files.append(
        (
            distinfo + "/WHEEL",
            (
                "Wheel-Version: 1.0\nGenerator: retrylab python/build_wheel.py\nRoot-Is-Purelib: false\n"
                + "".join("Tag: py3-none-%s\n" % t for t in tags)
            ).encode(),
            0o644,
        )
    )
    files.append(
        (
            distinfo + "/entry_points.txt",
            b"[console_scripts]\nretrylab = retrylab:main\n\n[pytest11]\nretrylab = retrylab.pytest_plugin\n",
            0o644,
        )
    )
    record = io.StringIO()
    for arc, data, _ in files:
        record.write("%s,%s,%d\n" % (arc, record_hash(data), len(data)))
    record.write("%s/RECORD,,\n" % distinfo)
    files.append((distinfo + "/RECORD", record.getvalue().encode(), 0o644))

    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
    date = time.gmtime(max(epoch, 315532800))[:6]
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, name)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        # dist-info last (RECORD last of all), as wheel tools write it.
        for arc, data, mode in files:
            info = zipfile.ZipInfo(arc, date_time=date)
            info.external_attr = (0o100000 | mode) << 16
            info.create_system = 3
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data, compresslevel=9)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("--goos", required=True)
    ap.add_argument("--goarch", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    print(build(a.binary, a.goos, a.goarch, a.version, a.out))


if __name__ == "__main__":
    main()
