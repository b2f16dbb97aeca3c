"""A fix's patch applied to a release's source and compiled against that release's jars into a small jar in the
cache, to put ahead of the release's jars on a node's classpath (docs/fixes.md, "On Kafka's own code").

- The source: the release's ``-sources`` jar from the local Maven repository (Maven fetches it from the registry
  when it is not there: ``dependency:get``); for a release in ``PORTS`` (4.4.0, whose ``-sources`` jar the
  registry does not serve), the earlier release's file with the port's diff applied.
- The patch: ``patch -p1`` (GNU patch) in a scratch directory laid out as Kafka's repository.
- The compiler: ``javac --release N`` for a Java file, N read from the release's own class file of it (the major
  version Kafka's build targeted); for a Scala file, scalac of the release's Scala version (the version of the
  release's ``scala-library`` jar; ``org.scala-lang:scala-compiler`` fetched by Maven) with Kafka's own flags for
  core (``SCALAC_FLAGS``: ``-release N`` and the optimiser's inlining from ``org.apache.kafka.**``). The jar holds
  every class the file compiles to.
- The cache: ``CACHE/<release>/patches/<fix>/`` (CACHE is the harness's Kafka cache, realkafka/cluster/release.py),
  rebuilt when the patch, the port or the flags change (a stamp of them).
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

from realkafka.cluster import processes
from realkafka.cluster.errors import HarnessError
from realkafka.cluster.release import cache_root, fetch, java, parse_version

from .catalogue import PORTS, SOURCES, Source, patch_path, port_path

# Kafka's scalac options for core (2.13) as far as they change the class files: the optimiser inlines from Kafka's
# Java modules and from core itself. Checked on 3.9.2's own ReplicaManager.scala (scalac 2.13.15, -release 8): 18
# of its 19 class files byte-identical to the release's, and ReplicaManager.class differs in one inlining decision
# (docs/fixes.md, "On Kafka's own code"); without kafka.** seven differ.
SCALAC_FLAGS = ("-nowarn", "-encoding", "utf8", "-language:postfixOps", "-language:implicitConversions",
                "-language:existentials", "-opt:l:inline", "-opt-inline-from:org.apache.kafka.**",
                "-opt-inline-from:kafka.**")
STAMP = ".complete"
CLASS_MAJOR_TO_RELEASE = {52: "8", 55: "11", 61: "17", 65: "21"}


class PatchError(HarnessError):
    """A patch that does not apply, a source the registry does not serve, a compiler that fails."""


def m2_repository() -> Path:
    return Path(os.environ.get("JBODCHECK_M2_REPOSITORY") or Path.home() / ".m2" / "repository")


def _mvn_get(coordinates: str, path: Path, what: str) -> Path:
    """``path`` in the local Maven repository, fetched by Maven (``dependency:get``) when missing."""
    if path.is_file():
        return path
    mvn = shutil.which("mvn")
    if not mvn:
        raise PatchError(f"Maven (mvn) is not installed: it fetches {what}")
    path.parent.mkdir(parents=True, exist_ok=True)
    p = processes.run([mvn, "-B", "-q", "dependency:get", f"-Dartifact={coordinates}", "-Dtransitive=false"],
                      cwd=path.parent)
    if p.returncode != 0 or not path.is_file():
        raise PatchError(f"Maven could not fetch {what} ({coordinates}): "
                         + (" ".join((p.stdout + p.stderr).split())[-300:] or f"exit {p.returncode}"))
    return path


def sources_jar(artifact: str, version: str) -> Path:
    """The release's ``-sources`` jar of ``artifact`` (the local Maven repository; fetched when missing)."""
    path = m2_repository() / "org" / "apache" / "kafka" / artifact / version / f"{artifact}-{version}-sources.jar"
    return _mvn_get(f"org.apache.kafka:{artifact}:{version}:jar:sources", path, f"Kafka {version}'s source")


def cached_sources(artifact: str, version: str) -> bool:
    """Whether the ``-sources`` jar is in the local Maven repository (no network needed)."""
    base = PORTS.get(version, version)
    return (m2_repository() / "org" / "apache" / "kafka" / artifact / base / f"{artifact}-{base}-sources.jar").is_file()


def _patch(workdir: Path, diff: Path, *, dry_run: bool = False) -> None:
    """``patch -p1`` of ``diff`` in ``workdir`` (laid out as Kafka's repository); PatchError naming the hunk that
    failed."""
    tool = shutil.which("patch")
    if not tool:
        raise PatchError("GNU patch (patch) is not installed: it applies the fixes' diffs")
    argv = [tool, "-p1", "--batch", "--forward", "--no-backup-if-mismatch", "-r", "-", "-d", str(workdir),
            "-i", str(diff), *(["--dry-run"] if dry_run else [])]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        said = " ".join((p.stdout + p.stderr).split())
        raise PatchError(f"{diff.relative_to(diff.parents[2])} does not apply: {said[:300]}")


def release_source(source: Source, release: str) -> str:
    """The release's own text of ``source``: from its ``-sources`` jar, or (``PORTS``) the earlier release's with
    the port applied."""
    base = PORTS.get(release, release)
    with zipfile.ZipFile(sources_jar(source.artifact, base)) as jar:
        text = jar.read(source.entry).decode("utf-8")
    port = port_path(release, source)
    if base == release or not port.is_file():
        return text
    with tempfile.TemporaryDirectory(prefix="jbodcheck-port-") as tmp:
        target = Path(tmp) / source.path
        target.parent.mkdir(parents=True)
        target.write_text(text, encoding="utf-8")
        _patch(Path(tmp), port)
        return target.read_text(encoding="utf-8")


def patched_source(fix: str, release: str, *, dry_run: bool = False) -> str:
    """The release's source of the fix's file with the fix's patch applied (``dry_run``: only checks it applies,
    returns the unpatched text). PatchError when there is no such patch or it does not apply."""
    source, diff = SOURCES[fix], patch_path(fix, release)
    if not diff.is_file():
        raise PatchError(f"the fix {fix} has no patch for Kafka {release} (realkafka/patches/{fix}/)")
    text = release_source(source, release)
    with tempfile.TemporaryDirectory(prefix="jbodcheck-patch-") as tmp:
        target = Path(tmp) / source.path
        target.parent.mkdir(parents=True)
        target.write_text(text, encoding="utf-8")
        _patch(Path(tmp), diff, dry_run=dry_run)
        return target.read_text(encoding="utf-8")


def _release_class(source: Source, libs: Path, version: str) -> bytes:
    jar = libs / f"{source.artifact}-{version}.jar"
    with zipfile.ZipFile(jar) as z:
        return z.read(source.stem + ".class")


def target_release(source: Source, libs: Path, version: str) -> str:
    """The Java release the release's own class of ``source`` was compiled for (its class file's major version)."""
    major = int.from_bytes(_release_class(source, libs, version)[6:8], "big")
    if major not in CLASS_MAJOR_TO_RELEASE:
        raise PatchError(f"{source.class_name} of Kafka {version} has class file version {major}, unknown here")
    return CLASS_MAJOR_TO_RELEASE[major]


def scala_version(libs: Path) -> str:
    found = sorted(libs.glob("scala-library-*.jar"))
    if not found:
        raise PatchError(f"no scala-library jar in {libs}")
    return found[0].name[len("scala-library-"):-len(".jar")]


def scalac_classpath(version: str) -> list[Path]:
    """scala-compiler, scala-library and scala-reflect of ``version`` (fetched by Maven when missing)."""
    base = m2_repository() / "org" / "scala-lang"
    return [_mvn_get(f"org.scala-lang:{name}:{version}", base / name / version / f"{name}-{version}.jar",
                     f"scalac {version}")
            for name in ("scala-compiler", "scala-library", "scala-reflect")]


def compile_source(source: Source, text: str, release: str, out: Path, log=None) -> list[Path]:
    """``text`` (the file ``source`` of ``release``) compiled against the release's jars into ``out``; the class
    files it made."""
    kafka = fetch(release, log=log)
    libs = kafka.libs
    jars = sorted(str(j) for j in libs.glob("*.jar"))
    target = target_release(source, libs, release)
    out.mkdir(parents=True, exist_ok=True)
    src_root = out.parent / "src"
    path = src_root / source.path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if source.scala:
        version = scala_version(libs)
        compiler = scalac_classpath(version)
        if log:
            log(f"compiling {source.path} of Kafka {release} with scalac {version} (-release {target})")
        argv = [java(), "-Xss4m", "-Xmx1g", "-cp", os.pathsep.join(map(str, compiler)), "scala.tools.nsc.Main",
                *SCALAC_FLAGS, "-release", target, "-d", str(out), "-cp", os.pathsep.join(jars), str(path)]
    else:
        javac = shutil.which("javac") if not os.environ.get("JAVA_HOME") else str(Path(os.environ["JAVA_HOME"]) / "bin" / "javac")
        if log:
            log(f"compiling {source.path} of Kafka {release} with javac --release {target}")
        argv = [javac, "-nowarn", "-encoding", "UTF-8", "--release", target, "-d", str(out), "-cp",
                os.pathsep.join(jars), str(path)]
    p = processes.run(argv, cwd=out)
    if p.returncode != 0:
        first = next((line for line in (p.stdout + p.stderr).splitlines() if "error" in line.lower()),
                     p.stderr or p.stdout)
        raise PatchError(f"could not compile {source.path} of Kafka {release}: {' '.join(first.split())[:300]}")
    made = sorted(out.rglob("*.class"))
    if not any(m.relative_to(out).as_posix() == source.stem + ".class" for m in made):
        raise PatchError(f"compiling {source.path} made no {source.stem}.class")
    return made


def _stamp(fix: str, release: str) -> str:
    source = SOURCES[fix]
    h = hashlib.sha256()
    for part in (patch_path(fix, release), port_path(release, source)):
        h.update(part.read_bytes() if part.is_file() else b"-")
    h.update(repr((SCALAC_FLAGS, sorted(CLASS_MAJOR_TO_RELEASE.items()))).encode())
    return h.hexdigest()


def jar_dir(fix: str, release: str) -> Path:
    return cache_root() / release / "patches" / fix


def jar_path(fix: str, release: str) -> Path:
    return jar_dir(fix, release) / f"{fix}-{release}.jar"


def cached_jar(fix: str, release: str) -> Path | None:
    """The patch jar if it is built and current, else None (nothing is built)."""
    folder = jar_dir(fix, release)
    stamp = folder / STAMP
    if stamp.is_file() and stamp.read_text().strip() == _stamp(fix, release) and jar_path(fix, release).is_file():
        return jar_path(fix, release)
    return None


def patched_jar(fix: str, release: str, *, log=None) -> Path:
    """The jar of the fix's patched classes for ``release`` (built on first use, cached): put it ahead of the
    release's jars on the classpath. ValueError for an unknown fix or release; PatchError when the fix has no
    patch for the release, the patch does not apply, or the compiler fails; HarnessError when Maven or Java
    fails."""
    if fix not in SOURCES:
        raise ValueError(f"no patch of Kafka's code for the fix {fix!r} (patched: {', '.join(SOURCES)})")
    parse_version(release)
    found = cached_jar(fix, release)
    if found is not None:
        return found
    text = patched_source(fix, release)
    folder = jar_dir(fix, release)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    try:
        classes = folder / "classes"
        made = compile_source(SOURCES[fix], text, release, classes, log=log)
        with zipfile.ZipFile(jar_path(fix, release), "w", zipfile.ZIP_DEFLATED) as jar:
            for m in made:
                jar.write(m, m.relative_to(classes).as_posix())
        (folder / STAMP).write_text(_stamp(fix, release) + "\n")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return jar_path(fix, release)


def jar_classes(jar: Path) -> list[str]:
    """The class names a patch jar holds (kafka.server.ReplicaManager, kafka.server.ReplicaManager$$anon$1, ...)."""
    with zipfile.ZipFile(jar) as z:
        return sorted(n[:-len(".class")].replace("/", ".") for n in z.namelist() if n.endswith(".class"))


def _javap(classes: Path, name: str) -> str:
    javap = shutil.which("javap") or "javap"
    p = subprocess.run([javap, "-c", "-p", "-cp", str(classes), name], capture_output=True, text=True, timeout=120)
    # masked: the constant-pool indexes (#123), which a recompilation may renumber, and the number of a synthetic
    # lambda method (javac 17 numbers lambda$m$N across the class; the compiler 4.4.0 was built with, per method)
    return re.sub(r"(lambda\$[\w$]*?\$)\d+\b", r"\1N", re.sub(r"#\d+(,\s*\d+)?", "#", p.stdout))


def check_port(source: Source, release: str, *, log=None) -> list[str]:
    """Compile the release's unpatched source of ``source`` (for a ``PORTS`` release: the port) and compare every
    class it makes with the release's own: [] when each is byte-identical or ``javap -c -p`` identical, else one
    line per class that differs (or that the release does not have)."""
    kafka = fetch(release, log=log)
    text = release_source(source, release)
    with tempfile.TemporaryDirectory(prefix="jbodcheck-port-check-") as tmp:
        ours = Path(tmp) / "classes"
        made = compile_source(source, text, release, ours, log=log)
        theirs = Path(tmp) / "release"
        with zipfile.ZipFile(kafka.libs / f"{source.artifact}-{release}.jar") as z:
            z.extractall(theirs, [m.relative_to(ours).as_posix() for m in made
                                  if m.relative_to(ours).as_posix() in z.namelist()])
        differ = []
        for m in made:
            rel = m.relative_to(ours).as_posix()
            other = theirs / rel
            if not other.is_file():
                differ.append(f"{rel}: not in Kafka {release}'s {source.artifact} jar")
            elif other.read_bytes() != m.read_bytes():
                name = rel[:-len(".class")].replace("/", ".")
                if _javap(ours, name) != _javap(theirs, name):
                    differ.append(f"{rel}: javap -c -p differs from Kafka {release}'s")
        return differ
