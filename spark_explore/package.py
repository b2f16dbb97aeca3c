"""Build the zip that spark-submit ships to the executors with --py-files (docs/spark.md).

    python -m spark_explore.package [OUT.zip]        # default: dist/jbodcheck-py.zip

It holds the packages model, invariants, explorer and spark_explore (Python sources only). Their
third-party dependencies with compiled code (xxhash, numpy) and attrs must be installed on the executors, or
shipped as a packed environment with --archives.
"""
from __future__ import annotations

import os
import sys
import zipfile

PACKAGES = ("model", "invariants", "explorer", "spark_explore")


def build(out: str) -> list[str]:
    import importlib

    names = []
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for package in PACKAGES:
            root = os.path.dirname(importlib.import_module(package).__file__)
            base = os.path.dirname(root)
            for folder, dirs, files in os.walk(root):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                for name in sorted(files):
                    if name.endswith(".py"):
                        path = os.path.join(folder, name)
                        arcname = os.path.relpath(path, base)
                        zf.write(path, arcname)
                        names.append(arcname)
    return names


def main(argv=None) -> None:
    args = sys.argv[1:] if argv is None else argv
    out = args[0] if args else os.path.join("dist", "jbodcheck-py.zip")
    names = build(out)
    print(f"{out}: {len(names)} modules of {', '.join(PACKAGES)}")


if __name__ == "__main__":
    main()
