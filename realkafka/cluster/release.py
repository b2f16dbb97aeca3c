"""A Kafka release's runnable classpath, fetched by Maven into a cache outside the repository, and the project's
own Java helpers (the gate and the probe) compiled against it (docs/realkafka.md, "Releases").

``fetch(version)`` is idempotent: a release whose cache is complete (libs, classes, and a stamp of the Maven file
and the Java sources that built them) is returned at once; concurrent fetches of one release wait for each other
(a lock file). Nothing is downloaded but by Maven, from the registry, by name and version.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import attrs

from .errors import HarnessError

CACHE_ENV = "JBODCHECK_KAFKA_CACHE"
HERE = Path(__file__).resolve().parent.parent          # realkafka/
POM = HERE / "maven" / "pom.xml"
JAVA_SOURCES = HERE / "java"
VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")
OLDEST = (3, 7)              # KRaft JBOD (KIP-858) is in 3.7.0 and later
STAMP = ".complete"


def cache_root() -> Path:
    """``$JBODCHECK_KAFKA_CACHE``, else ``~/.cache/jbodcheck/kafka``."""
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "jbodcheck" / "kafka").expanduser()


def parse_version(version: str) -> tuple[int, int, int]:
    """(major, minor, patch); ValueError for anything but a release from 3.7.0 on."""
    m = VERSION.match(str(version))
    if not m:
        raise ValueError(f"{version!r} is not a Kafka release (MAJOR.MINOR.PATCH, e.g. 3.9.2)")
    parts = tuple(int(x) for x in m.groups())
    if parts[:2] < OLDEST:
        raise ValueError(f"Kafka {version} predates KRaft JBOD (KIP-858, 3.7.0): the harness runs 3.7.0 and later")
    return parts


@attrs.frozen
class Release:
    """One fetched release: its jars (``libs``) and the project's helpers compiled against them (``classes``)."""

    version: str
    libs: Path
    classes: Path

    @property
    def parts(self) -> tuple[int, int, int]:
        return parse_version(self.version)

    @property
    def logging(self) -> str:
        """How the release logs: 3.x through log4j 1 (reload4j), 4.x through log4j2."""
        return logging_of(self.version)

    @property
    def classpath(self) -> str:
        return f"{self.classes}{os.pathsep}{self.libs}{os.sep}*"


def logging_of(version: str) -> str:
    return "reload4j" if parse_version(version)[0] < 4 else "log4j2"


def _stamp(*paths: Path) -> str:
    """What built a cache part: its sources' bytes (a change rebuilds that part)."""
    h = hashlib.sha256()
    for path in paths:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _libs_stamp() -> str:
    return _stamp(POM)


def _classes_stamp() -> str:
    return _stamp(*sorted(JAVA_SOURCES.rglob("*.java")))


def _current(part: Path, stamp: str) -> bool:
    marker = part / STAMP
    return marker.is_file() and marker.read_text().strip() == stamp


def _tool(name: str) -> str:
    home = os.environ.get("JAVA_HOME")
    if name in ("java", "javac") and home and (Path(home) / "bin" / name).exists():
        return str(Path(home) / "bin" / name)
    found = shutil.which(name)
    if not found:
        what = {"mvn": "Maven (mvn)", "java": "Java 17+ (java)", "javac": "a JDK 17+ (javac)"}[name]
        raise HarnessError(f"{what} is not installed: the real-cluster harness needs it (docs/realkafka.md)")
    return found


def java() -> str:
    """The java executable (``$JAVA_HOME/bin/java`` or on PATH), or a HarnessError naming what is missing."""
    return _tool("java")


def cached(version: str) -> Release | None:
    """The release if its cache is complete and current, else None (nothing is fetched)."""
    home = cache_root() / version
    libs, classes = home / "libs", home / "classes"
    if _current(libs, _libs_stamp()) and _current(classes, _classes_stamp()):
        return Release(version, libs, classes)
    return None


@contextlib.contextmanager
def _locked(home: Path):
    home.mkdir(parents=True, exist_ok=True)
    with open(home / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _first_error(output: str) -> str:
    """Maven's first [ERROR] line, shortened to its cause (an artifact the registry does not serve, a network
    failure)."""
    output = re.sub(r"\x1b\[[0-9;]*m", "", output)
    missing = re.search(r"(\S+:\S+:jar:\S+) was not found", output)
    if missing:
        return f"the registry does not serve {missing.group(1)}"
    errors = [line.split("[ERROR]", 1)[1].strip() for line in output.splitlines() if "[ERROR]" in line]
    errors = [e for e in errors if e and not e.startswith(("->", "To see", "Re-run", "For more", "[Help"))]
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return (errors[0] if errors else (lines[-1] if lines else "no output"))[:300]


def _fetch_libs(version: str, libs: Path, log) -> None:
    mvn = _tool("mvn")
    shutil.rmtree(libs, ignore_errors=True)
    if log:
        log(f"fetching Kafka {version}'s jars with Maven into {libs}")
    p = subprocess.run([mvn, "-B", "-q", "-f", str(POM), f"-Dkafka.version={version}",
                        f"-Dkafka.logging={logging_of(version)}", f"-DoutputDirectory={libs}",
                        "dependency:copy-dependencies"],
                       cwd=libs.parent, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if p.returncode != 0 or not any(libs.glob(f"kafka_2.13-{version}.jar")):
        shutil.rmtree(libs, ignore_errors=True)
        raise HarnessError(f"Maven could not fetch Kafka {version} (org.apache.kafka:kafka_2.13:{version}): "
                           f"{_first_error(p.stdout + p.stderr)}")
    (libs / STAMP).write_text(_libs_stamp() + "\n")


def _compile(version: str, libs: Path, classes: Path, log) -> None:
    javac = _tool("javac")
    shutil.rmtree(classes, ignore_errors=True)
    if log:
        log(f"compiling the gate and the probe against Kafka {version} into {classes}")
    sources = [str(s) for s in sorted(JAVA_SOURCES.rglob("*.java"))]
    classes.mkdir(parents=True)
    p = subprocess.run([javac, "-nowarn", "-encoding", "UTF-8", "-d", str(classes), "-cp", f"{libs}{os.sep}*",
                        *sources], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        shutil.rmtree(classes, ignore_errors=True)
        first = next((line for line in p.stderr.splitlines() if "error" in line), p.stderr.strip()[:300])
        raise HarnessError(f"javac could not compile the harness's Java helpers against Kafka {version}: {first}")
    (classes / STAMP).write_text(_classes_stamp() + "\n")


def fetch(version: str, *, log=None) -> Release:
    """The release's jars and the project's helpers, fetched and built on first use (``log(line)`` hears what is
    done). ValueError for a version the harness does not run; HarnessError when Maven, Java or the registry
    fails."""
    parse_version(version)
    release = cached(version)
    if release is not None:
        return release
    _tool("java")
    home = cache_root() / version
    libs, classes = home / "libs", home / "classes"
    with _locked(home):
        if not _current(libs, _libs_stamp()):
            _fetch_libs(version, libs, log)
        if not _current(classes, _classes_stamp()):
            _compile(version, libs, classes, log)
    return Release(version, libs, classes)
