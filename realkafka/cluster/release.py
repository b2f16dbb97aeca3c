"""A Kafka release's runnable classpath, fetched by Maven into a cache outside the repository, and the project's
own Java helpers (the gate and the probe) compiled against it (docs/realkafka.md, "Releases").

``fetch(version)`` is idempotent: a release whose cache is complete (libs, classes, and a stamp of the Maven file
and the Java sources that built them) is returned at once; concurrent fetches wait for each other (one lock file in
the cache); a fetch that fails leaves nothing of the release it created. Nothing is downloaded but by Maven, from
the registry, by name and version; Maven and javac run as the cluster's JVMs do (processes.py ``run``): none
outlives the harness.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import tempfile
from pathlib import Path

import attrs

from . import processes
from .errors import BadRelease, HarnessError, UnusableCache

CACHE_ENV = "JBODCHECK_KAFKA_CACHE"
HERE = Path(__file__).resolve().parent.parent          # realkafka/
POM = HERE / "maven" / "pom.xml"
JAVA_SOURCES = HERE / "java"
_NUMBER = "(0|[1-9][0-9]*)"
VERSION = re.compile(rf"{_NUMBER}\.{_NUMBER}\.{_NUMBER}")           # fullmatch: no newline, ASCII digits only
LINE_OR_VERSION = re.compile(rf"{_NUMBER}\.{_NUMBER}(?:\.{_NUMBER})?")
OLDEST = (3, 7)              # KRaft JBOD (KIP-858) is in 3.7.0 and later
STAMP = ".complete"
LOCK = ".fetch.lock"
# X.Y -> its newest patch release on Maven Central when this was written (3.7 is the first line with KRaft JBOD;
# 3.9 is the last 3.x line). Every patch up to these is served; a later one is asked of Maven, except in a line
# that gets no more releases (CLOSED: end of life, later lines out).
NEWEST_PATCH = {"3.7": "3.7.2", "3.8": "3.8.1", "3.9": "3.9.2", "4.0": "4.0.2", "4.1": "4.1.2", "4.2": "4.2.1",
                "4.3": "4.3.1", "4.4": "4.4.0"}
CLOSED = ("3.7", "3.8")
SERVED = f"served: 3.7.0 to {NEWEST_PATCH['4.4']}"


def cache_root() -> Path:
    """``$JBODCHECK_KAFKA_CACHE``, else ``~/.cache/jbodcheck/kafka``."""
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "jbodcheck" / "kafka").expanduser()


def parse_version(version: str) -> tuple[int, int, int]:
    """(major, minor, patch); ValueError for anything but a release from 3.7.0 on."""
    m = VERSION.fullmatch(str(version))
    if not m:
        raise ValueError(f"{version!r} is not a Kafka release (MAJOR.MINOR.PATCH, e.g. 3.9.2)")
    parts = tuple(int(x) for x in m.groups())
    if parts[:2] < OLDEST:
        raise ValueError(f"Kafka {version} predates KRaft JBOD (KIP-858, 3.7.0): the harness runs 3.7.0 and later")
    return parts


def resolve(text: str) -> str:
    """The release a user names: X.Y.Z as given, or X.Y as its line's newest patch (NEWEST_PATCH). ValueError (one
    line) for anything else, a release before 3.7.0, and one known not to exist (``known_absent``)."""
    m = LINE_OR_VERSION.fullmatch(str(text))
    if not m:
        raise ValueError(f"{text!r} is not a Kafka release (X.Y.Z, or X.Y for its newest patch)")
    if m[3] is None:
        line = f"{m[1]}.{m[2]}"
        if line not in NEWEST_PATCH:
            raise ValueError(f"{text}: no such Kafka release line with KRaft JBOD (known: {', '.join(NEWEST_PATCH)}; "
                             "a full X.Y.Z from 3.7.0 on is run as given)")
        return NEWEST_PATCH[line]
    parse_version(text)
    absent = known_absent(text)
    if absent:
        raise ValueError(absent)
    return text


def known_absent(version: str) -> str | None:
    """Why ``version`` (X.Y.Z from 3.7.0 on) is known not to be a release, without asking Maven, else None: a 3.x
    line after 3.9 (the last one), or a CLOSED line past its newest patch. Another patch or line may have been
    released since this was written: Maven is asked."""
    major, minor, patch = parse_version(version)
    line = f"{major}.{minor}"
    if major == 3 and line not in NEWEST_PATCH:
        return f"no such Kafka release {version} (3.9 is the last 3.x line; {SERVED})"
    if line in CLOSED and patch > int(NEWEST_PATCH[line].split(".")[2]):
        return f"no such Kafka release {version} (the newest {line} is {NEWEST_PATCH[line]}; {SERVED})"
    return None


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


def _classes_dir(home: Path) -> Path:
    """The helpers' classes, one directory per version of their sources: two checkouts (a campaign running from
    one while another is edited) never recompile under each other's running JVMs."""
    return home / f"classes-{_classes_stamp()[:16]}"


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
    libs, classes = home / "libs", _classes_dir(home)
    if _current(libs, _libs_stamp()) and _current(classes, _classes_stamp()):
        return Release(version, libs, classes)
    return None


@contextlib.contextmanager
def _locked(root: Path):
    """One fetch at a time in the cache (a lock file at its root: a version's directory may be removed)."""
    with open(root / LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _unusable(root: Path, error: OSError) -> UnusableCache:
    reason = error.strerror or str(error)
    where = error.filename or root
    return UnusableCache(f"the Kafka cache {root} cannot be used: {where}: {reason} (${CACHE_ENV} names another "
                         "directory)")


def _usable(root: Path) -> None:
    """The cache is a directory where a file can be created (``os.access`` says yes to root on a read-only mount)."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=root):
            pass
    except OSError as e:
        raise _unusable(root, e) from None


def _shorten(text: str, limit: int = 300) -> str:
    """At most ``limit`` characters, cut between words."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0] + " ..."


MISSING = (re.compile(r"(\S+:\S+:jar:\S+?) was not found"),
           re.compile(r"Could not find artifact (\S+:\S+:jar:\S+?)(?: in |\s|$)"))


def _missing_artifact(output: str) -> str | None:
    for pattern in MISSING:
        found = pattern.search(output)
        if found:
            return found.group(1)
    return None


def _first_error(output: str) -> str:
    """Maven's first [ERROR] line, shortened to its cause (an artifact the registry does not serve, a network
    failure)."""
    output = re.sub(r"\x1b\[[0-9;]*m", "", output)
    missing = _missing_artifact(output)
    if missing:
        return f"the registry does not serve {missing}"
    errors = [line.split("[ERROR]", 1)[1].strip() for line in output.splitlines() if "[ERROR]" in line]
    # Maven's generic lines ("Error executing Maven.", "Failed to execute goal ...: Execution ... failed") say
    # nothing of the cause: a "Caused by:" line, or a specific [ERROR] line, does.
    causes = [line.split("Caused by:", 1)[1].strip() for line in output.splitlines() if "Caused by:" in line]
    errors = [e for e in errors if e and not e.startswith(("->", "To see", "Re-run", "For more", "[Help",
                                                           "Error executing Maven"))]
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return _shorten(causes[-1] if causes else errors[0] if errors else (lines[-1] if lines else "no output"))


def _fetch_libs(version: str, libs: Path, log) -> None:
    mvn = _tool("mvn")
    shutil.rmtree(libs, ignore_errors=True)
    if log:
        log(f"fetching Kafka {version}'s jars from Maven Central with Maven into {libs}")
    p = processes.run([mvn, "-B", "-q", "-f", str(POM), f"-Dkafka.version={version}",
                       f"-Dkafka.logging={logging_of(version)}", f"-DoutputDirectory={libs}",
                       "dependency:copy-dependencies"], cwd=libs.parent)
    if p.returncode != 0 or not any(libs.glob(f"kafka_2.13-{version}.jar")):
        shutil.rmtree(libs, ignore_errors=True)
        output = re.sub(r"\x1b\[[0-9;]*m", "", p.stdout + p.stderr)
        artifact = f"org.apache.kafka:kafka_2.13:jar:{version}"
        if _missing_artifact(output) == artifact:
            raise BadRelease(f"no such Kafka release {version}: Maven Central does not serve {artifact} ({SERVED} "
                             "when this version of jbodcheck was written)")
        raise HarnessError(f"Maven could not fetch Kafka {version} (org.apache.kafka:kafka_2.13:{version}): "
                           f"{_first_error(output)}")
    (libs / STAMP).write_text(_libs_stamp() + "\n")


def _compile(version: str, libs: Path, classes: Path, log) -> None:
    javac = _tool("javac")
    shutil.rmtree(classes, ignore_errors=True)
    if log:
        log(f"compiling the gate and the probe against Kafka {version} into {classes}")
    sources = [str(s) for s in sorted(JAVA_SOURCES.rglob("*.java"))]
    classes.mkdir(parents=True)
    p = processes.run([javac, "-nowarn", "-encoding", "UTF-8", "-d", str(classes), "-cp", f"{libs}{os.sep}*",
                       *sources], cwd=classes)
    if p.returncode != 0:
        shutil.rmtree(classes, ignore_errors=True)
        first = next((line for line in p.stderr.splitlines() if "error" in line), p.stderr)
        raise HarnessError(f"javac could not compile the harness's Java helpers against Kafka {version}: "
                           f"{_shorten(first)}")
    (classes / STAMP).write_text(_classes_stamp() + "\n")


def fetch(version: str, *, log=None) -> Release:
    """The release's jars and the project's helpers, fetched and built on first use (``log(line)`` hears what is
    done: nothing when the cache has them). ValueError for a version the harness does not run or that is known
    not to exist; BadRelease when the registry does not serve it; UnusableCache when the cache cannot be written;
    HarnessError when Maven, Java or the registry fails. A failed fetch leaves no directory for the version unless
    a complete part (the jars) was there."""
    parse_version(version)
    absent = known_absent(version)
    if absent:
        raise ValueError(absent)
    release = cached(version)
    if release is not None:
        return release
    _tool("java")
    root = cache_root()
    _usable(root)
    home = root / version
    libs, classes = home / "libs", _classes_dir(home)
    with _locked(root):
        try:
            home.mkdir(exist_ok=True)
            if not _current(libs, _libs_stamp()):
                _fetch_libs(version, libs, log)
            if not _current(classes, _classes_stamp()):
                _compile(version, libs, classes, log)
        except BaseException as e:
            if not _current(libs, _libs_stamp()):
                shutil.rmtree(home, ignore_errors=True)
            if isinstance(e, OSError):
                raise _unusable(root, e) from None
            raise
    return Release(version, libs, classes)
