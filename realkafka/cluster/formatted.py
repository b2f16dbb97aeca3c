"""A cluster's formatted dirs, from a copy formatted once (docs/conform.md, "The cost of a trace").

The release's storage tool formats every node's dirs in a JVM each (3 to 6 s of a cluster's start on 2 cores). What
it writes does not depend on a trace: in each dir a ``meta.properties`` (version 1, ``node.id``, ``cluster.id``, a
random ``directory.id``) and, in the metadata dirs, the bootstrap metadata (the feature levels: ``bootstrap.checkpoint``
on 3.x, a ``__cluster_metadata-0`` snapshot on 4.x; neither names a cluster, a dir, a port or a path). So the
tree is formatted once per (release, classpath, brokers x dirs, feature and metadata.version arguments, settings)
into the Kafka cache (``<cache>/<release>/formatted/<key>``), and each cluster gets a copy whose ``cluster.id`` and
every ``directory.id`` are drawn anew: what the storage tool would have written, random ids included. A disk that
``replace_dir`` brings in is still formatted by the storage tool (a new ``directory.id``)."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

from . import processes

LAYOUT = 1          # the version of the cached tree's layout (a change formats anew)
META = "meta.properties"


def key(*, release: str, classpath: str, brokers: int, dirs: int, arguments: list[str],
        settings: dict[str, str]) -> str:
    """The cache entry's name: a digest of everything the format's output depends on (ports and paths aside)."""
    text = json.dumps({"layout": LAYOUT, "release": release, "classpath": classpath, "brokers": brokers,
                       "dirs": dirs, "arguments": arguments, "settings": sorted(settings.items())})
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def data_dirs(brokers: int, dirs: int) -> list[str]:
    """The formatted dirs of a cluster, relative to its root (Cluster._layout's names)."""
    out = ["controller/metadata"]
    for b in range(brokers):
        out += [f"broker-{b}/metadata", *(f"broker-{b}/dir-{d}" for d in range(dirs))]
    return out


def _complete(entry: Path, relative: list[str]) -> bool:
    return all((entry / r / META).is_file() for r in relative)


def _build(entry: Path, relative: list[str], format_into: Callable[[Path], None]) -> None:
    """Format a cluster's tree in a temporary dir beside ``entry`` and move its data dirs into place at once; a
    concurrent build of the same entry (another campaign) wins or loses whole."""
    entry.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".building-", dir=entry.parent))
    processes.register_dir(work)              # an interrupted build leaves nothing behind
    try:
        format_into(work / "tree")
        staged = work / "entry"
        for r in relative:
            shutil.copytree(work / "tree" / r, staged / r)
        try:
            os.rename(staged, entry)
        except OSError:
            if not _complete(entry, relative):
                raise
    finally:
        processes.remove_dir(work)


def _rewrite(meta: Path, cluster_id: str, directory_id: str) -> None:
    lines = []
    for line in meta.read_text().splitlines():
        name = line.partition("=")[0].strip()
        if name == "cluster.id":
            line = f"cluster.id={cluster_id}"
        elif name == "directory.id":
            line = f"directory.id={directory_id}"
        lines.append(line)
    meta.write_text("\n".join(lines) + "\n")


def copy_formatted(root: Path, entry: Path, relative: list[str], format_into: Callable[[Path], None], *,
                   cluster_id: str, new_id: Callable[[], str]) -> None:
    """Copy the formatted dirs of ``entry`` (built by ``format_into(path)`` when missing) under ``root``, each
    with ``cluster_id`` and a ``directory.id`` from ``new_id()``. OSError when the cache cannot be used."""
    if not _complete(entry, relative):
        if entry.exists():
            shutil.rmtree(entry, ignore_errors=True)      # a damaged entry: formatted anew
        _build(entry, relative, format_into)
    for r in relative:
        target = root / r
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(entry / r, target)
        _rewrite(target / META, cluster_id, new_id())
