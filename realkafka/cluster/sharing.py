"""Class-data sharing for the nodes' JVMs (docs/conform.md, "The cost of a trace").

A Kafka node's JVM spends most of its start loading and verifying the same few thousand classes. Java 17 keeps
them, parsed and verified, in a dynamic CDS archive written when a JVM started with ``-XX:ArchiveClassesAtExit``
exits normally; a JVM started with ``-XX:SharedArchiveFile`` maps it (on 2 shared cores: about 40% less CPU to a
registered node, measured in docs/conform.md). One archive per node kind (controller, broker) per (release,
classpath, java), in the Kafka cache (``<cache>/<release>/sharing/<key>``). It changes which bytes the JVM reads
its classes from, not one class: a JVM that finds the archive stale (another jar, another java) says so on its
stdout and loads every class as usual (``-Xshare:auto``, the default).

CDS archives classes from jars only, and refuses a class path with a non-empty directory: each directory of the
class path (the harness's own classes) is packed into a jar of the same classes for these JVMs.

The first cluster of a key trains: its first JVM of each kind starts with ``-XX:ArchiveClassesAtExit`` into a
temporary file, and when that cluster ends without an error, that broker and then the controller are ended by
SIGTERM (Kafka's own shutdown, then the JVM writes the archive) instead of SIGKILL, and the archives are moved into
place. Until a kind has its archive, each cluster tries again."""
from __future__ import annotations

import hashlib
import os
import zipfile
from pathlib import Path

KINDS = ("controller", "broker")


def _digest(*parts) -> str:
    return hashlib.sha256("\0".join(str(p) for p in parts).encode()).hexdigest()[:24]


def _tree_digest(path: Path) -> str:
    entries = sorted((str(p.relative_to(path)), p.stat().st_size, p.stat().st_mtime_ns)
                     for p in path.rglob("*") if p.is_file())
    return _digest(*entries)


def _jar_of(directory: Path, home: Path) -> Path:
    """A jar of ``directory``'s files (built once per content, atomically)."""
    jar = home / f"{directory.name}-{_tree_digest(directory)}.jar"
    if not jar.is_file():
        home.mkdir(parents=True, exist_ok=True)
        tmp = jar.with_name(f".{jar.name}.{os.getpid()}")
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED) as z:
            for p in sorted(directory.rglob("*")):
                if p.is_file():
                    z.write(p, str(p.relative_to(directory)))
        os.replace(tmp, jar)
    return jar


class Sharing:
    """The class path and JVM options of a node kind, for one release's cluster."""

    def __init__(self, release_home: Path, classpath: str, java: str):
        real = Path(os.path.realpath(java))
        stat = real.stat()
        self.home = release_home / "sharing" / _digest(classpath, real, stat.st_size, stat.st_mtime_ns)
        entries = []
        for entry in classpath.split(os.pathsep):
            path = Path(entry)
            entries.append(str(_jar_of(path, self.home)) if path.is_dir() and any(path.iterdir()) else entry)
        self.classpath = os.pathsep.join(entries)
        self.training: dict[str, list[Path]] = {}      # kind -> the archives its training JVMs write at exit

    def archive(self, kind: str) -> Path:
        return self.home / f"{kind}.jsa"

    def options(self, kind: str, tag: str) -> tuple[list[str], Path | None]:
        """(the JVM's options, the archive it writes at exit or None): the archive when there is one, else the
        option that writes one (``tag`` names the JVM)."""
        if self.archive(kind).is_file():
            return [f"-XX:SharedArchiveFile={self.archive(kind)}"], None
        if self.training.get(kind):
            return [], None             # one JVM of a kind trains per cluster (writing an archive costs CPU)
        self.home.mkdir(parents=True, exist_ok=True)
        out = self.home / f".{kind}-{os.getpid()}-{tag}.jsa"
        self.training.setdefault(kind, []).append(out)
        return [f"-XX:ArchiveClassesAtExit={out}"], out

    @property
    def trains(self) -> bool:
        return bool(self.training)

    def keep(self, written: dict[str, list[Path]]) -> list[str]:
        """Move the first archive of each kind that a JVM wrote at its own exit (``written``) into place; remove
        every other training file. The kinds archived."""
        done = []
        for kind, outs in written.items():
            outs = [p for p in outs if p.is_file() and p.stat().st_size > 0]
            if outs and not self.archive(kind).is_file():
                os.replace(outs[0], self.archive(kind))
                done.append(kind)
        for outs in self.training.values():
            for p in outs:
                if p.exists():
                    p.unlink()
        self.training = {}
        return done
