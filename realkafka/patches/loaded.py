"""Which jar each patched class came from, read from the JVM's class-loading log, so that a run never silently
uses the release's unpatched class (docs/fixes.md, "On Kafka's own code").

A node started with patch jars logs every class it loads (realkafka/cluster/lifecycle.py: ``-Xlog:class+load=info``
to a file per JVM in the node's directory, ``CLASS_LOAD_LOG``: ``NAME source: file:/.../x.jar``).
``check_loaded`` reads those files: every class of a patch jar that a JVM loaded must have come from that jar, and each patch's own class (the file's
top-level class) must have been loaded from it by some node.
"""
from __future__ import annotations

import re
from pathlib import Path

from realkafka.cluster.node import CLASS_LOAD_LOG

from .build import jar_classes

LOG_GLOB = CLASS_LOAD_LOG.replace("%p", "*")
LINE = re.compile(r"\]\s(?P<name>[\w.$]+) source: (?P<source>.+)$")


def _loaded(log: Path) -> dict[str, str]:
    found = {}
    with open(log, errors="replace") as f:
        for line in f:
            m = LINE.search(line.rstrip("\n"))
            if m:
                found[m["name"]] = m["source"]
    return found


def check_loaded(homes: list[Path], jars: dict[Path, str]) -> tuple[dict[str, list[str]], list[str]]:
    """``jars``: patch jar -> its own class (kafka.server.ReplicaManager). Returns (own class -> the logs, by node
    directory name, that loaded it from its patch jar; problems, one line each: a patched class loaded from
    elsewhere, or a patch whose own class no node loaded)."""
    where: dict[str, list[str]] = {own: [] for own in jars.values()}
    problems = []
    for home in homes:
        for log in sorted(home.glob(LOG_GLOB)):
            loaded = _loaded(log)
            for jar, own in jars.items():
                expected = jar.resolve().as_uri()
                for name in jar_classes(jar):
                    source = loaded.get(name)
                    if source is None:
                        continue
                    if source.replace("file:/", "file:///", 1) != expected and source != expected \
                            and not source.endswith(str(jar.resolve())):
                        problems.append(f"{home.name} loaded {name} from {source}, not from the patch {jar.name}")
                    elif name == own:
                        where[own].append(home.name)
    for own, nodes in where.items():
        if not nodes:
            problems.append(f"no node loaded {own} from its patch jar")
    return where, problems
