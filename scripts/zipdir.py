"""zipdir.py DIR OUT.zip: a reproducible zip of DIR (entries under DIR's
name, sorted, dated SOURCE_DATE_EPOCH, mode 0755 for executables and 0644
for the rest), for the Windows archives of scripts/dist.sh."""
import os
import sys
import time
import zipfile


def main():
    src, dst = sys.argv[1], sys.argv[2]
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
    # zip stores local time fields without a zone; dist.sh runs with TZ=UTC.
    date = time.gmtime(max(epoch, 315532800))[:6]
    base = os.path.basename(os.path.normpath(src))
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as z:
        for name in sorted(os.listdir(src)):
            path = os.path.join(src, name)
            info = zipfile.ZipInfo(base + "/" + name, date_time=date)
            mode = 0o755 if os.access(path, os.X_OK) or name.endswith(".exe") else 0o644
            info.external_attr = (0o100000 | mode) << 16
            info.create_system = 3
            info.compress_type = zipfile.ZIP_DEFLATED
            with open(path, "rb") as f:
                z.writestr(info, f.read(), compresslevel=9)


if __name__ == "__main__":
    main()
