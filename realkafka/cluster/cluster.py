"""A real KRaft cluster on loopback: one controller process and N broker processes with D log dirs each, started,
faulted, observed and stopped by the harness (docs/realkafka.md).

    with Cluster(ClusterSpec(release="3.9.2", brokers=2, dirs=2)) as c:
        c.create_topic("t", {0: [0, 1]})
        c.fail_dir(0, 0)
        c.wait_until(lambda o: o.controller.partitions[("t", 0)].leader == 1, what="t-0 led by broker 1")
"""
from __future__ import annotations

import base64
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable, Mapping

import attrs

from . import config, formatted, processes, sharing
from .answers import AnswerProxy
from .errors import HarnessError
from .observation import (BrokerObservation, ClusterObservation, ControllerImage, Dir, DirNames, ImageBuilder,
                          MetadataRecord, Replica)
from .probe import Probe, ProbeError
from .release import Release, fetch, java, parse_version

METADATA_PARTITION = "__cluster_metadata-0"
JVM_OPTIONS = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData", "-Xss512k",
               "-Djava.awt.headless=true"]
_EXCEPTION_LINE = re.compile(r"^(Caused by: )?[\w.$]+(Exception|Error)(: .*)?$")
# With patch jars, each node's JVM logs every class it loads and where from, to this file in the node's directory
# (%p: the JVM's pid): realkafka/patches/loaded.py checks that the patched classes came from the patch jars.
CLASS_LOAD_LOG = "class-load-%p.log"
PARTITION_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)(?:\.(?P<uid>[0-9a-f]{32})-(?P<kind>future|delete|stray))?$")


@attrs.frozen
class ClusterSpec:
    """What to start. ``elr``: None keeps the release's default for a new cluster (off before 4.1, on from 4.1);
    True/False sets it on 4.x (the storage tool's ``--feature eligible.leader.replicas.version=1|0``); on 3.x
    ELR is off (False is accepted) and cannot be turned on with a production metadata version (docs/realkafka.md,
    "ELR"). ``settings`` are extra properties of every node; ``broker_settings`` and ``controller_settings`` of
    one kind only."""

    release: str
    brokers: int = 2
    dirs: int = 2
    elr: bool | None = None
    settings: Mapping[str, str] = attrs.field(factory=dict)
    broker_settings: Mapping[str, str] = attrs.field(factory=dict)
    controller_settings: Mapping[str, str] = attrs.field(factory=dict)
    heap: str = "320m"
    keep: bool = False             # leave the temporary directory (logs, data) for a post-mortem
    # format at this metadata.version (the storage tool's --release-version, e.g. "3.6-IV2"); None: the latest
    metadata_version: str | None = None
    start_timeout: float = 240     # JVM start-up on a loaded 2-core machine takes long; a wait is not a speed test
    # jars put ahead of the release's jars on the controller's and the brokers' classpath (a fix's patched classes,
    # realkafka/patches/), each node then logging its class loading (CLASS_LOAD_LOG); () runs the release as is
    patches: tuple = attrs.field(default=(), converter=lambda jars: tuple(Path(j) for j in jars))
    # the dirs copied from a tree formatted once (formatted.py: fresh ids, as the storage tool writes), not formatted
    formatted_copy: bool = False
    # the nodes' JVMs map a class-data sharing archive of their kind (sharing.py), trained by the first cluster
    class_sharing: bool = False
    # the brokers reach the controller through the answer proxy (realkafka/cluster/answers.py), which can hold the
    # controller's answers to AssignReplicasToDirs (hold_answers)
    answers: bool = False

    def __attrs_post_init__(self):
        version = parse_version(self.release)
        if not 1 <= self.brokers <= 16 or not 1 <= self.dirs <= 8:
            raise ValueError(f"a cluster of {self.brokers} brokers x {self.dirs} dirs is outside 1..16 x 1..8")
        if self.elr and version[0] < 4:
            raise ValueError(f"Kafka {self.release} runs no ELR on a production metadata version "
                             f"(MetadataVersion.isElrSupported needs an unstable one in 3.8 and 3.9): ELR is 4.0 and later")


@attrs.frozen
class ProduceResult:
    offset: int | None             # the acknowledged record's offset (acks=all), or None
    error: str | None              # the producer's error ("NotEnoughReplicasException: ..."), or None


@attrs.frozen
class ConsumeResult:
    records: tuple                 # ((offset, value bytes), ...) read from offset 0 up to the high watermark
    start: int                     # the log start offset the consumer was given
    end: int                       # the high watermark the consumer read up to (endOffsets)
    complete: bool                 # it reached the end within the timeout


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _random_uuid() -> str:
    """A Kafka Uuid in its base64 text form (as ``kafka-storage random-uuid`` prints), never one of the reserved
    ids (their first 8 bytes are zero) and never starting with "-" (a command-line option)."""
    while True:
        raw = secrets.token_bytes(16)
        text = base64.urlsafe_b64encode(raw).decode().rstrip("=")
        if raw[:8] != bytes(8) and not text.startswith("-"):
            return text


def _read_properties(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        if "=" in line and not line.lstrip().startswith("#"):
            k, _, v = line.partition("=")
            out[k.strip()] = v.strip()
    return out


def api_name(api: str) -> str:
    """Kafka's ApiKeys name: "AssignReplicasToDirs" or "ASSIGN_REPLICAS_TO_DIRS" -> ASSIGN_REPLICAS_TO_DIRS."""
    if "_" in api or api.isupper():
        return api.upper()
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", api).upper()


# Requests a broker sends to the controller (the gate denies them at the controller by default).
TO_CONTROLLER = {"ASSIGN_REPLICAS_TO_DIRS", "BROKER_HEARTBEAT", "BROKER_REGISTRATION", "ALTER_PARTITION",
                 "UNREGISTER_BROKER"}


class Node:
    """One JVM of the cluster: its config, log and process."""

    def __init__(self, node_id: int, kind: str, home: Path):
        self.id, self.kind, self.home = node_id, kind, home
        self.properties = home / "server.properties"
        self.log = home / "server.log"
        self.stdout = home / "stdout.log"
        self.proc: subprocess.Popen | None = None
        self.held = False
        self.expected = False          # started by the harness and not since crashed or shut down by it
        self.removed: set = set()      # dir indexes taken out of its log.dirs (remove_dir)
        self.starts = 0                # JVMs started for it
        self.archive_out = None        # the class-data sharing archive its JVM writes at exit (sharing.py), if any

    def died(self) -> str | None:
        """A line saying how the node ended when the harness did not end it, else None."""
        if not self.expected or self.proc is None or self.proc.poll() is None:
            return None
        last, tail, cause = "", [], ""
        if self.log.exists():
            lines = self.log.read_text(errors="replace").splitlines()
            errors = [l for l in lines if " ERROR " in l or " FATAL " in l]
            last = errors[-1][:300] if errors else ""
            # the exception's own line (its class and message; the innermost cause is the last), not its stack
            causes = [l.strip() for l in lines if _EXCEPTION_LINE.match(l.strip())]
            cause = causes[-1][:300] if causes else ""
            tail = [l[:200] for l in lines[-2:]]
        name = {"controller": "the controller", "zookeeper": "the ZooKeeper server"}.get(self.kind, f"broker {self.id}")
        code = self.proc.returncode
        how = (f"was ended by signal {signal.Signals(-code).name}, not by jbodcheck" if code < 0 and
               -code in signal.valid_signals() else f"exited with code {code}")
        return (f"{name} {how}" + (f"; its last error: {last}" if last else "")
                + (f"; its exception ({self.log}): {cause}" if cause else
                   f"; its last log lines ({self.log}): {' | '.join(tail)}" if tail else ""))

    def killed(self) -> str | None:
        """A line when the node ended without the harness ending it in a way that is not Kafka's own doing: the
        controller ended at all (the model's controller never stops), or a broker was ended by a signal (the OOM
        killer, a stray kill). A broker that exited by itself with a code (a controlled shutdown, the dir-failure
        timeout, a halt) is Kafka's behaviour: observed as down, judged by the model. None otherwise."""
        if not self.expected or self.proc is None or self.proc.poll() is None:
            return None
        if self.kind != "broker" or self.proc.returncode < 0:
            return self.died()
        return None

    @property
    def up(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


def _point_at_removed_logs(error: BaseException | None, root: Path | None, keep: bool) -> None:
    """An error that names a file of the cluster's directory, which ``stop`` has just removed (no ``keep``), says
    to re-run with ``--keep`` to keep it instead."""
    if keep or root is None or not isinstance(error, (HarnessError, ProbeError)) or not error.args:
        return
    text = str(error.args[0])
    prefix = re.escape(str(root) + os.sep)
    new = re.sub(rf"see {prefix}([^\s:;,)]+)", r"its log \1 is removed: re-run with --keep to keep it", text)
    new = re.sub(rf"{prefix}([^\s:;,)]+)", r"\1 (removed; --keep keeps it)", new)
    error.args = (new, *error.args[1:])


class Cluster:
    """A started cluster (``with Cluster(spec) as c``: formatted, started, every broker registered and
    unfenced; stopped and removed at the end, also on an exception or Ctrl-C)."""

    OBSERVATION = ClusterObservation

    def __init__(self, spec: ClusterSpec, *, log: Callable[[str], None] | None = None):
        self.spec = spec
        self.version = parse_version(spec.release)
        self._log = log or (lambda line: None)
        self.kafka: Release | None = None
        self.root: Path | None = None
        self.probe: Probe | None = None
        self.controller: Node | None = None
        self.brokers: dict[int, Node] = {}
        self.ports: list[int] = []
        self.dir_ids: dict[str, tuple[int, int] | str] = {}
        self._replaced: set = set()     # (broker, dir) replaced whose new directory.id is not known yet
        self._gate_rules: list[tuple[str, str, str, str]] = []
        self.answers: AnswerProxy | None = None
        self._started = False
        self._sharing: sharing.Sharing | None = None

    # ---- life cycle ----------------------------------------------------------------------------------------------

    def __enter__(self) -> "Cluster":
        self.start()
        return self

    def __exit__(self, _type, error, _tb) -> None:
        root = self.root
        try:
            if error is None:
                self._finish_training()
        finally:
            self.stop()
        _point_at_removed_logs(error, root, self.spec.keep)

    def start(self) -> "Cluster":
        spec = self.spec
        self.kafka = fetch(spec.release, log=self._log)
        self._java = java()
        self._sharing = self._class_sharing()
        processes.cluster_started()
        self._started = True
        try:
            self.root = Path(tempfile.mkdtemp(prefix=f"jbodcheck-kafka-{spec.release}-"))
            processes.register_dir(self.root)
            self._layout()
            self._format_or_copy()
            self._start_node(self.controller)
            for b in self.brokers:
                self._start_node(self.brokers[b])
            self._log(f"cluster: {self._nodes_line()} starting (Kafka {spec.release}, {self.root})")
            bootstrap = ",".join(f"127.0.0.1:{self._broker_port[b]}" for b in self.brokers)
            self.probe = Probe(self._java, self.kafka.classpath, bootstrap, self.root,
                               ["-Xms16m", "-Xmx160m", *JVM_OPTIONS, *self._logging_options(self.root / "probe-client")])
            self.wait_until(lambda o: all(b in o.controller.registrations and not o.controller.registrations[b].fenced
                                          for b in self.brokers),
                            timeout=spec.start_timeout, what="every broker registered and unfenced", light=True)
        except BaseException as e:
            root = self.root
            self.stop()
            _point_at_removed_logs(e, root, spec.keep)
            raise
        return self

    def _finish_training(self, timeout: float = 120) -> None:
        """Where this cluster's JVMs train the class-data sharing archives (sharing.py), end them as Kafka ends (SIGTERM:
        a training broker's controlled shutdown, then the controller), so that each writes its archive, and keep
        them; nothing when the controller is held or down (stop() SIGKILLs what is left)."""
        if self._sharing is None or not self._sharing.trains:
            return
        written: dict = {}
        if self.controller is not None and self.controller.up and not self.controller.held:
            self._gate_rules = []
            self._write_gate()                    # a held request would stall the controlled shutdown
            training = [n for n in self.brokers.values() if n.up and not n.held and n.archive_out is not None]
            for group in (training, [self.controller] if self.controller.archive_out is not None else []):
                for n in group:
                    n.expected = False
                    processes.signal_group(n.proc, signal.SIGTERM)
                deadline = time.monotonic() + timeout
                for n in group:
                    try:
                        n.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
                    except subprocess.TimeoutExpired:
                        continue
                    if n.archive_out is not None:
                        written.setdefault(n.kind, []).append(n.archive_out)
        kept = self._sharing.keep(written)
        if kept:
            self._log(f"cluster: class-data sharing archives of {', '.join(kept)} written ({self._sharing.home})")

    def _nodes_line(self) -> str:
        return f"controller {config.CONTROLLER_ID} and brokers {list(self.brokers)}"

    def stop(self) -> None:
        """Kill every process of the cluster (a held controller too) and remove its temporary directory, unless
        ``keep``. Idempotent."""
        if self.probe is not None:
            self.probe.close()
            self.probe = None
        nodes = [n for n in [*self.brokers.values(), self.controller] if n is not None and n.proc is not None]
        for n in nodes:
            processes.signal_group(n.proc, signal.SIGKILL)
        for n in nodes:
            n.expected = False
            processes.kill(n.proc)
            n.held = False
        if self._sharing is not None:
            self._sharing.keep({})        # a training JVM killed (an error, Ctrl-C) leaves no file in the cache
        if self.answers is not None:
            self.answers.close()
            self.answers = None
        if self.root is not None:
            if self.spec.keep:
                processes.forget_dir(self.root)
                self._log(f"cluster: kept {self.root}")
            else:
                processes.remove_dir(self.root)
        if self._started:
            processes.cluster_stopped()
            self._started = False

    # ---- set-up --------------------------------------------------------------------------------------------------

    def _layout(self) -> None:
        spec, root = self.spec, self.root
        self.cluster_id = _random_uuid()
        self.gate_file, self.gate_log = root / "gate", root / "gate.log"
        controller_port = _free_port()
        self._broker_port = {b: _free_port() for b in range(spec.brokers)}
        self.ports = [controller_port, *self._broker_port.values()]
        common = dict(controller_port=controller_port, gate_file=self.gate_file, gate_log=self.gate_log,
                      version=self.version, elr=spec.elr)
        self.controller = Node(config.CONTROLLER_ID, "controller", root / "controller")
        self.controller.metadata_dir = self.controller.home / "metadata"
        self.controller.home.mkdir()
        config.write_properties(self.controller.properties, config.node_properties(
            node_id=config.CONTROLLER_ID, roles="controller", listener_port=controller_port,
            log_dirs=[self.controller.metadata_dir], metadata_dir=None,
            settings={**spec.settings, **spec.controller_settings}, **common))
        if spec.answers:
            # every broker's controller.quorum.voters names the proxy, which forwards to the controller
            self.answers = AnswerProxy(controller_port)
            common = dict(common, controller_port=self.answers.port)
        for b in range(spec.brokers):
            node = Node(b, "broker", root / f"broker-{b}")
            node.home.mkdir()
            node.metadata_dir = node.home / "metadata"
            node.dirs = [node.home / f"dir-{d}" for d in range(spec.dirs)]
            self.brokers[b] = node
            config.write_properties(node.properties, config.node_properties(
                node_id=b, roles="broker", listener_port=self._broker_port[b], log_dirs=node.dirs,
                metadata_dir=node.metadata_dir, settings={**spec.settings, **spec.broker_settings}, **common))

    def _logging_options(self, stem: Path) -> list[str]:
        text, option = config.logging_config(self.kafka.logging, stem.with_suffix(".log"))
        conf = stem.with_name(stem.name + "-logging.properties")
        conf.write_text(text)
        return [option.format(conf)]

    def _format(self, nodes=None, extra: tuple = ()) -> None:
        """Every node's dirs (or ``nodes``'), formatted by the release's storage tool with one cluster id, in
        parallel; ``extra``: more arguments (``--ignore-formatted`` for a new disk)."""
        running = []
        for node in nodes or [self.controller, *self.brokers.values()]:
            out = open(node.home / "format.log", "ab")
            argv = [self._java, "-Xmx128m", *JVM_OPTIONS, *self._logging_options(node.home / "format"),
                    "-cp", self.kafka.classpath, "kafka.tools.StorageTool", "format", "-t", self.cluster_id,
                    "-c", str(node.properties), *self._format_arguments(), *extra]
            running.append((node, processes.spawn(argv, cwd=node.home, stdout=out, stderr=subprocess.STDOUT), out))
        failures = []
        for node, proc, out in running:
            try:
                code = proc.wait(timeout=self.spec.start_timeout)
            except subprocess.TimeoutExpired:
                processes.kill(proc)
                code = "timeout"
            processes.forget(proc)
            out.close()
            if code != 0:
                tail = (node.home / "format.log").read_text(errors="replace").strip().splitlines()[-1:] or [""]
                failures.append(f"node {node.id}: {tail[0][:200]} (exit {code})")
        if failures:
            raise HarnessError(f"the storage tool of Kafka {self.spec.release} could not format: {'; '.join(failures)}")
        if nodes is None:
            self._learn_dir_ids()

    def _learn_dir_ids(self) -> None:
        for b, node in self.brokers.items():
            for d, path in enumerate(node.dirs):
                props = _read_properties(path / "meta.properties")
                self.dir_ids[props["directory.id"]] = (b, d)
        self.names = DirNames(self.dir_ids)

    def _format_or_copy(self) -> None:
        """The nodes' dirs: with ``formatted_copy``, a copy of a tree formatted once (formatted.py), else (or when
        the cache cannot be used) formatted by the storage tool."""
        self.formatted_from = None
        if self.spec.formatted_copy:
            spec = self.spec
            relative = formatted.data_dirs(spec.brokers, spec.dirs)
            entry = self.kafka.classes.parent / "formatted" / formatted.key(
                release=spec.release, classpath=self.kafka.classpath, brokers=spec.brokers, dirs=spec.dirs,
                arguments=self._format_arguments(),
                settings={"all": spec.settings, "brokers": spec.broker_settings, "controller": spec.controller_settings})
            try:
                formatted.copy_formatted(self.root, entry, relative, self._format_into, cluster_id=self.cluster_id,
                                         new_id=_random_uuid)
                self._learn_dir_ids()
                self.formatted_from = entry
                return
            except OSError as e:
                self._log(f"cluster: no formatted copy ({e}): the storage tool formats")
                for r in relative:
                    shutil.rmtree(self.root / r, ignore_errors=True)
        self._format()

    def _format_into(self, path: Path) -> None:
        """Lay out and format a cluster of this spec under ``path`` (the formatted copy's source), started never."""
        other = Cluster(attrs.evolve(self.spec, formatted_copy=False, keep=False))
        other.kafka, other._java, other.root = self.kafka, self._java, path
        path.mkdir(parents=True)
        other._layout()
        other._format()

    def _format_arguments(self) -> list[str]:
        """The storage tool's arguments beyond the cluster id and the config (features, metadata.version)."""
        return [*config.format_features(self.version, self.spec.elr),
                *(["--release-version", self.spec.metadata_version] if self.spec.metadata_version else [])]

    def _class_sharing(self) -> sharing.Sharing | None:
        if not self.spec.class_sharing or self.spec.patches:
            # a class mapped from an archive is logged as from the archive, not its jar: the check that a patched
            # class came from the patch jar (realkafka/patches/loaded.py) needs each class loaded from its jar
            return None
        try:
            return sharing.Sharing(self.kafka.classes.parent, self._nodes_classpath(), self._java)
        except OSError as e:
            self._log(f"cluster: no class-data sharing ({e})")
            return None

    def _start_node(self, node: Node) -> None:
        classpath, options = self._nodes_classpath(), []
        node.archive_out = None
        node.starts += 1
        if self._sharing is not None:
            classpath = self._sharing.classpath
            options, node.archive_out = self._sharing.options(node.kind, f"{node.id}-{node.starts}")
        out = open(node.stdout, "ab")
        argv = [self._java, "-Xms32m", f"-Xmx{self.spec.heap}", *JVM_OPTIONS, *options, *self._class_load_log(node),
                f"-Dkafka.logs.dir={node.home}", *self._logging_options(node.home / "server"), "-cp", classpath,
                "kafka.Kafka", str(node.properties)]
        node.proc = processes.spawn(argv, cwd=node.home, stdout=out, stderr=subprocess.STDOUT)
        out.close()
        node.held = False
        node.expected = True

    def _nodes_classpath(self) -> str:
        """The controller's and the brokers' classpath: the patch jars (``spec.patches``) ahead of the release's
        jars; the release's alone otherwise."""
        return os.pathsep.join([*(str(j) for j in self.spec.patches), self.kafka.classpath])

    def _class_load_log(self, node: Node) -> list[str]:
        """With patch jars, the node's JVM logs where each class came from (checked by realkafka/patches/loaded.py)."""
        return [f"-Xlog:class+load=info:file={node.home / CLASS_LOAD_LOG}"] if self.spec.patches else []

    # ---- faults and timing ---------------------------------------------------------------------------------------

    def _broker(self, b: int) -> Node:
        if b not in self.brokers:
            raise ValueError(f"no broker {b} (brokers {list(self.brokers)})")
        return self.brokers[b]

    def dir_path(self, b: int, d: int) -> Path:
        node = self._broker(b)
        if not 0 <= d < len(node.dirs):
            raise ValueError(f"broker {b} has no dir {d} (dirs 0..{len(node.dirs) - 1})")
        return node.dirs[d]

    def fail_dir(self, b: int, d: int, *, wait: bool = True, timeout: float = 60) -> None:
        """Fail broker b's dir d as Kafka's LogDirFailureTest does (TestUtils.causeLogDirFailure): the dir is
        moved aside (``dir-d.failed``, kept for ``repair_dir``) and a regular file takes its place, so that the
        broker's next checkpoint in it (every second: config.BROKER) fails with an IOException and
        LogDirFailureChannel takes the dir offline. With ``wait`` and the broker up, waits until describeLogDirs
        reports the dir offline."""
        path = self.dir_path(b, d)
        aside = path.with_name(path.name + ".failed")
        if aside.exists():
            raise HarnessError(f"broker {b}'s dir {d} is already failed")
        os.rename(path, aside)
        path.write_text("jbodcheck: a failed log dir (the dir was moved aside)\n")
        self._log(f"cluster: broker {b}'s dir {d} failed")
        if wait and self.brokers[b].up:
            self.wait_until(lambda o: o.brokers[b].dirs[d].online is False, timeout=timeout,
                            what=f"broker {b}'s dir {d} reported offline", light=True)

    def repair_dir(self, b: int, d: int) -> None:
        """Bring a failed dir back (its data as it was). A running broker keeps the dir offline (LogManager
        never takes an offline dir back): restart it to use the dir again."""
        path = self.dir_path(b, d)
        aside = path.with_name(path.name + ".failed")
        if not aside.is_dir():
            raise HarnessError(f"broker {b}'s dir {d} is not failed")
        path.unlink()
        os.rename(aside, path)
        self._log(f"cluster: broker {b}'s dir {d} repaired")

    def replace_dir(self, b: int, d: int) -> None:
        """A new disk in place of broker b's failed dir d, while the broker is down, as an operator brings one in:
        an empty dir, formatted by the release's storage tool with ``--ignore-formatted`` (a broker refuses to
        start with an unformatted log dir: "No meta.properties found", 3.7 to 4.4), which writes a new
        directory.id. Its old contents (kept aside as ``dir-d.failed``) become ``dir-d.replaced``: gone for Kafka
        and for the failed-copy view. The harness names the new id dir d and the old one "dir d of broker b before
        its replacement", never dir d (the model keeps one id across a replacement, Kafka does not: the views show
        the difference)."""
        if self._broker(b).up:
            raise HarnessError(f"broker {b} is running: a disk is replaced while its broker is down")
        path = self.dir_path(b, d)
        aside = path.with_name(path.name + ".failed")
        if not path.is_file():
            raise HarnessError(f"broker {b}'s dir {d} is not failed")
        path.unlink()
        if aside.exists():
            os.rename(aside, path.with_name(path.name + ".replaced"))
        path.mkdir()
        self._format([self._broker(b)], ("--ignore-formatted",))
        self._replaced.add((b, d))
        self._learn_replaced_ids()
        self._log(f"cluster: broker {b}'s dir {d} replaced by a new, formatted one")

    def remove_dir(self, b: int, d: int) -> None:
        """Broker b's dir d leaves its log.dirs, while the broker is down (its next start runs without it)."""
        node = self._broker(b)
        if node.up:
            raise HarnessError(f"broker {b} is running: log.dirs changes while its broker is down")
        if d in node.removed:
            raise HarnessError(f"broker {b}'s dir {d} is not in its log.dirs")
        node.removed.add(d)
        aside = self.dir_path(b, d).with_name(f"dir-{d}.failed")
        if aside.exists():     # no longer the broker's: not a failed copy it holds
            os.rename(aside, aside.with_name(f"dir-{d}.removed"))
        props = _read_properties(node.properties)
        props["log.dirs"] = ",".join(str(p) for i, p in enumerate(node.dirs) if i not in node.removed)
        config.write_properties(node.properties, props)
        self._log(f"cluster: broker {b}'s dir {d} removed from its log.dirs")

    def _learn_replaced_ids(self) -> None:
        """The new directory.id Kafka wrote into a replaced dir, once it did (see replace_dir)."""
        for b, d in sorted(self._replaced):
            props = self.dir_path(b, d) / "meta.properties"
            new = _read_properties(props).get("directory.id") if props.exists() else None
            if not new or new in self.dir_ids:
                continue
            for u, named in list(self.dir_ids.items()):
                if named == (b, d):
                    self.dir_ids[u] = f"dir {d} of broker {b} before its replacement"
            self.dir_ids[new] = (b, d)
            self.names = DirNames(self.dir_ids)
            self._replaced.discard((b, d))

    def crash(self, b: int) -> None:
        """SIGKILL: no controlled shutdown, no flush."""
        node = self._broker(b)
        if not node.up:
            raise HarnessError(f"broker {b} is not running")
        node.expected = False
        processes.kill(node.proc)
        self._log(f"cluster: broker {b} crashed (SIGKILL)")

    def controlled_shutdown(self, b: int, *, timeout: float = 120) -> None:
        """SIGTERM: Kafka's shutdown hook runs the controlled shutdown (BrokerLifecycleManager asks the controller
        to move leadership away, then the broker stops); waits for the process to end."""
        node = self._broker(b)
        if not node.up:
            raise HarnessError(f"broker {b} is not running")
        node.expected = False
        processes.signal_group(node.proc, signal.SIGTERM)
        try:
            node.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise HarnessError(f"broker {b} did not end within {timeout:.0f} s of SIGTERM (see {node.log})") from None
        processes.forget(node.proc)
        self._log(f"cluster: broker {b} shut down (SIGTERM, exit {node.proc.returncode})")

    def restart(self, b: int, *, wait: str | None = "unfenced", timeout: float | None = None) -> None:
        """Start a stopped broker again with the same config (a failed dir stays failed: the regular file in its
        place makes the broker start with that dir offline). ``wait``: "unfenced" (a new registration, unfenced),
        "registered" (a new registration) or None."""
        node = self._broker(b)
        if node.up:
            raise HarnessError(f"broker {b} is still running")
        before = self.observe(light=True).controller.registrations.get(b)
        old_epoch = before.epoch if before else -1
        self._start_node(node)
        self._log(f"cluster: broker {b} restarting")
        if wait:
            want_unfenced = wait == "unfenced"
            self.wait_until(lambda o: b in o.controller.registrations
                            and o.controller.registrations[b].epoch > old_epoch
                            and (not want_unfenced or not o.controller.registrations[b].fenced),
                            timeout=timeout or self.spec.start_timeout,
                            what=f"broker {b} re-registered" + (" and unfenced" if want_unfenced else ""), light=True)

    def hold_controller(self) -> None:
        """SIGSTOP the controller: every request to it waits (in its socket) until ``release_controller``."""
        if not self.controller.up:
            raise HarnessError("the controller is not running")
        processes.signal_group(self.controller.proc, signal.SIGSTOP)
        self.controller.held = True
        self._log("cluster: controller held (SIGSTOP)")

    def release_controller(self) -> None:
        processes.signal_group(self.controller.proc, signal.SIGCONT)
        self.controller.held = False
        self._log("cluster: controller released (SIGCONT)")

    def hold(self, api: str, *, broker: int | None = None, at: int | str | None = None,
             operation: str | None = None, delay: bool | float = False) -> None:
        """Deny the request ``api`` (Kafka's name: "AssignReplicasToDirs", "BrokerHeartbeat", "Fetch", ...) from
        ``broker`` (None: from anyone) at node ``at`` (default: the controller for a broker-to-controller request,
        every node otherwise) until ``release``. With ``delay`` (True, or the cap in seconds) the gate keeps the
        request waiting in its handler thread instead and lets it through at the release (refused after the cap,
        25 s by default). What Kafka does with either: docs/realkafka.md, "The gate". Holding a request held
        already replaces its mode."""
        name = api_name(api)
        if at is None:
            at = config.CONTROLLER_ID if name in TO_CONTROLLER else "*"
        rule = (name, str(at), "*" if broker is None else str(broker), (operation or "*").upper())
        mode = "deny" if not delay else "delay" if delay is True else f"delay={int(float(delay) * 1000)}"
        self._gate_rules = [r for r in self._gate_rules if r[:4] != rule] + [rule + (mode,)]
        self._write_gate()
        self._log(f"cluster: gate holds {name} from {rule[2]} at {rule[1]}" + (f" ({mode})" if delay else ""))

    def release(self, api: str | None = None, *, broker: int | None = None, at: int | str | None = None) -> None:
        """Stop denying what ``hold`` denied (every rule for ``api``, narrowed by ``broker``/``at``; all rules
        when ``api`` is None)."""
        name = api_name(api) if api else None
        self._gate_rules = [r for r in self._gate_rules
                            if not ((name is None or r[0] == name) and (broker is None or r[2] == str(broker))
                                    and (at is None or r[1] == str(at)))]
        self._write_gate()

    def _write_gate(self) -> None:
        tmp = self.gate_file.with_name("gate.tmp")
        tmp.write_text("".join(" ".join(r) + "\n" for r in self._gate_rules))
        os.replace(tmp, self.gate_file)

    def gate_lines(self) -> list[str]:
        """The gate's log: "millis API at=NODE from=CLIENT op=OPERATION resource=...", a delayed request's line
        ending " delayed=MS then=ALLOWED" (or "then=DENIED": refused at the cap or by a refusing rule)."""
        return self.gate_log.read_text().splitlines() if self.gate_log.exists() else []

    def hold_answers(self, broker: int) -> None:
        """Hold the controller's answers to ``broker``'s AssignReplicasToDirs (after the controller handled them)
        until ``release_answers``: needs ``ClusterSpec(answers=True)``. docs/conform.md, "The window between the
        acceptance and the swap"."""
        if self.answers is None:
            raise HarnessError("the cluster was started without the answer proxy (ClusterSpec(answers=True))")
        self.answers.hold(str(broker))
        self._log(f"cluster: the controller's answers to broker {broker}'s AssignReplicasToDirs held")

    def release_answers(self, broker: int | None = None) -> None:
        if self.answers is not None:
            self.answers.release(None if broker is None else str(broker))

    def denials(self) -> list[str]:
        """The gate's log of refused requests (delayed ones that were let through left out)."""
        return [line for line in self.gate_lines() if not line.endswith(" then=ALLOWED")]

    def delays(self) -> list[str]:
        """The gate's log of delayed requests, let through or refused after the wait."""
        return [line for line in self.gate_lines() if " delayed=" in line]

    # ---- the Admin API, the producer and the consumer, through the probe ------------------------------------------

    def _call(self, op: str, timeout: float = 60, **args):
        if self.probe is None:
            raise HarnessError("the cluster is not running")
        return self.probe.call(op, timeout=timeout, **args)

    def create_topic(self, topic: str, assignment: Mapping[int, list[int]], *, configs: Mapping[str, str] | None = None,
                     wait: bool = True, timeout: float = 60) -> None:
        """createTopics with a manual assignment (partition -> replicas, the first the preferred leader); with
        ``wait``, until the controller's image has every partition with a leader."""
        self._call("createTopic", timeout, topic=topic, assignment={str(p): list(r) for p, r in assignment.items()},
                   configs={k: str(v) for k, v in (configs or {}).items()})
        if wait:
            self.wait_until(lambda o: all((topic, p) in o.controller.partitions
                                          and o.controller.partitions[(topic, p)].leader >= 0 for p in assignment),
                            timeout=timeout, what=f"topic {topic} created with leaders", light=True)

    def delete_topic(self, topic: str, *, wait: bool = True, timeout: float = 60) -> None:
        """deleteTopics; with ``wait``, until the controller's image has none of the topic's partitions."""
        self._call("deleteTopic", timeout, topic=topic)
        if wait:
            self.wait_until(lambda o: not any(t == topic for t, _ in o.controller.partitions),
                            timeout=timeout, what=f"topic {topic} deleted", light=True)

    def reassign(self, topic: str, partition: int, replicas: list[int] | None) -> None:
        """alterPartitionReassignments (None cancels the reassignment)."""
        self._call("reassign", topic=topic, partition=partition, replicas=None if replicas is None else list(replicas))

    def reassignments(self) -> dict:
        return self._call("listReassignments")

    def alter_replica_log_dir(self, topic: str, partition: int, *, broker: int, dir: int) -> None:
        """alterReplicaLogDirs: move the replica on ``broker`` to its dir ``dir`` (a "-future" log until caught up)."""
        self._call("alterReplicaLogDir", topic=topic, partition=partition, broker=broker,
                   path=str(self.dir_path(broker, dir)))

    def elect_leaders(self, topic: str, partition: int, kind: str = "preferred") -> str | None:
        """electLeaders (``kind`` "preferred" or "unclean"); the partition's error, or None."""
        if kind not in ("preferred", "unclean"):
            raise ValueError(f"election kind {kind!r} is not preferred or unclean")
        return self._call("electLeaders", topic=topic, partition=partition, type=kind)["error"]

    def produce(self, topic: str, partition: int, value: bytes, *, timeout: float = 30) -> ProduceResult:
        """One record with acks=all: its offset once acknowledged, or the producer's error after its delivery
        timeout (the first call's ``timeout``: one producer serves the cluster), never a record that lands after
        a reported failure."""
        r = self._call("produce", timeout + 30, topic=topic, partition=partition,
                       value=base64.b64encode(value).decode(), delivery_timeout_ms=int(timeout * 1000))
        return ProduceResult(offset=r["offset"], error=r["error"])

    def send(self, topic: str, partition: int, value: bytes, *, timeout: float = 30):
        """One record with acks=all, sent without waiting for its acknowledgement: the returned call ``sent()``
        waits for it and gives the ProduceResult ``produce`` gives (the record's acknowledgement may await what the
        caller does meanwhile; the probe serves other calls while it waits)."""
        ticket = self._call("produceAsync", 60, topic=topic, partition=partition,
                            value=base64.b64encode(value).decode(), delivery_timeout_ms=int(timeout * 1000))["ticket"]
        deadline = time.monotonic() + timeout + 30

        def sent() -> ProduceResult:
            while True:
                r = self._call("produceResult", 30, ticket=ticket, wait_ms=200)
                if r["done"]:
                    return ProduceResult(offset=r["offset"], error=r["error"])
                if time.monotonic() > deadline:
                    raise HarnessError(f"the probe's send of a record to {topic}-{partition} has no outcome "
                                       f"{timeout + 30:.0f} s after it (the producer's delivery timeout is {timeout:.0f} s)")
        return sent

    def consume(self, topic: str, partition: int, *, timeout: float = 30) -> ConsumeResult:
        """What a consumer reads from offset 0 up to the high watermark (read_uncommitted)."""
        r = self._call("consume", timeout, topic=topic, partition=partition)
        records = tuple((x["offset"], None if x["value"] is None else base64.b64decode(x["value"]))
                        for x in r["records"])
        return ConsumeResult(records=records, start=r["start"], end=r["end"], complete=r["complete"])

    def upgrade_metadata_version(self, *, timeout: float = 60) -> tuple[int, int]:
        """Admin updateFeatures: metadata.version to the highest level the brokers support (the release's latest
        production one); (the feature level before, after)."""
        r = self._call("upgradeMetadataVersion", timeout)
        self._log(f"cluster: metadata.version upgraded from level {r['before']} to {r['after']}")
        return r["before"], r["after"]

    def describe_topics(self, topics: list[str], *, timeout: float = 30) -> dict:
        """describeTopics, as the brokers' metadata says: (topic, partition) -> {leader, isr, replicas, elr,
        lastKnownElr} (elr/lastKnownElr None where the release's client lacks them)."""
        r = self._call("describeTopics", timeout, topics=list(topics))
        return {(t, int(p)): v for t, parts in r.items() for p, v in parts.items()}

    def features(self) -> dict:
        """describeFeatures: the finalized feature levels (metadata.version, eligible.leader.replicas.version)."""
        return self._call("describeFeatures")

    # ---- observation ---------------------------------------------------------------------------------------------

    def metadata_records(self) -> list[MetadataRecord]:
        """The controller's metadata log, decoded by Kafka's MetadataRecordSerde (control records left out)."""
        path = self.controller.metadata_dir / METADATA_PARTITION
        if not path.is_dir():
            return []
        return [MetadataRecord(r["offset"], r["type"], r.get("data") or {})
                for r in self._call("readMetadata", path=str(path)) if not r.get("control")]

    def observe(self, *, topics: list[str] | None = None, light: bool = False) -> ClusterObservation:
        """The cluster now. ``light``: the controller's image, processes and (for brokers that are up) their dirs'
        online-ness only, without reading replica logs or describing topics (for waits)."""
        controller, records = self._controller_view()
        described = self._describe_log_dirs([b for b, n in self.brokers.items() if n.up], controller)
        brokers = {b: self._observe_broker(b, described.get(b), light) for b in self.brokers}
        topic_names = topics if topics is not None else sorted({t for t, _ in controller.partitions})
        topic_view = {}
        if not light and topic_names and not self.controller.held:
            try:
                topic_view = self.describe_topics(topic_names, timeout=15)
            except ProbeError:
                topic_view = {}
        return self.OBSERVATION(brokers=brokers, controller=controller, records=tuple(records), topics=topic_view)

    def _controller_view(self) -> tuple:
        """(the controller's image, the metadata records but NoOpRecords) from its metadata log."""
        self._learn_replaced_ids()
        builder = ImageBuilder(self.names)
        records = []
        for r in self.metadata_records():
            builder.replay(r)
            if r.type != "NoOpRecord":
                records.append(r)
        return builder.image(up=self.controller.up, held=self.controller.held), records

    def _describe_log_dirs(self, up: list[int], controller: ControllerImage) -> dict:
        """describeLogDirs of each running broker that the cluster's metadata can reach (a broker never
        registered, or fenced since it started, is not in the Admin client's metadata); {} per failure."""
        asked = [b for b in up if b in controller.registrations]
        if not asked:
            return {}
        try:
            result = self._call("describeLogDirs", 20, brokers=asked)
        except (ProbeError, HarnessError) as e:
            if isinstance(e, HarnessError) and self.probe is not None and self.probe.proc.poll() is not None:
                raise
            result = {}
            for b in asked:      # one at a time: a broker that cannot answer does not hide the others
                try:
                    result.update(self._call("describeLogDirs", 10, brokers=[b]))
                except ProbeError:
                    pass
        return {int(b): dirs for b, dirs in result.items()}

    def _observe_broker(self, b: int, described: dict | None, light: bool) -> BrokerObservation:
        node = self.brokers[b]
        by_path = {str(Path(p).resolve()): v for p, v in (described or {}).items()}
        dirs = []
        replicas: dict[tuple[str, int], dict] = {}
        paths_to_read = {}
        for d, path in enumerate(node.dirs):
            props_path = path / "meta.properties"
            dir_id = next((u for u, bd in self.dir_ids.items() if bd == (b, d)), "")
            info = by_path.get(str(path.resolve())) if path.is_dir() else by_path.get(str(path))
            online = None if info is None else info["error"] is None
            dirs.append(Dir(index=d, path=str(path), id=dir_id, exists=path.is_dir(), online=online,
                            configured=d not in node.removed))
            if not path.is_dir() or not props_path.exists() or d in node.removed:
                continue
            for entry in sorted(os.listdir(path)):
                m = PARTITION_DIR.match(entry)
                if not m or not (path / entry).is_dir():
                    continue
                key = (m.group("topic"), int(m.group("partition")))
                if m.group("kind") in ("delete", "stray"):
                    continue
                slot = replicas.setdefault(key, {"dir": None, "future": None})
                if m.group("kind") == "future":
                    slot["future"] = d
                else:
                    slot["dir"] = d
                    paths_to_read[key] = path / entry
        logs = {}
        if not light and paths_to_read:
            logs = self._call("readLogs", paths=[str(p) for p in paths_to_read.values()])
        out = {}
        for key, slot in replicas.items():
            path = paths_to_read.get(key)
            records, leo = (), None
            if path is not None and str(path) in logs:
                rs = logs[str(path)]
                records = tuple((r["offset"], None if r.get("value") is None else base64.b64decode(r["value"]))
                                for r in rs if not r.get("control"))
                bases = [int(f.stem) for f in path.glob("*.log") if f.stem.isdigit()]
                leo = max(rs[-1]["offset"] + 1 if rs else 0, max(bases, default=0))
            out[key] = Replica(dir=slot["dir"], future_dir=slot["future"], log_end_offset=leo, records=records)
        return BrokerObservation(id=b, up=node.up, dirs=tuple(dirs), replicas=out, described=described is not None)

    def wait_until(self, predicate: Callable[[ClusterObservation], bool], *, timeout: float = 60, what: str,
                   interval: float = 0.5, light: bool = False) -> ClusterObservation:
        """Observe until ``predicate`` holds; a HarnessError that names what was awaited and the last observation
        when it does not within ``timeout`` seconds, or when a process of the cluster died unasked."""
        deadline = time.monotonic() + timeout
        last, error = None, None
        while True:
            try:
                last, error = self.observe(light=light), None
                if predicate(last):
                    return last
            except ProbeError as e:
                error = str(e)             # the cluster is between states (a topic not yet known): look again
            dead = [line for n in [self.controller, *self.brokers.values()] if (line := n.died())]
            if dead:
                raise HarnessError(f"while waiting for {what}: {'; '.join(dead)}")
            if time.monotonic() >= deadline:
                seen = last.summary() if last is not None else "nothing observed"
                if error:
                    seen += f" (then the probe said: {error})"
                raise HarnessError(f"timed out after {timeout:.0f} s waiting for {what}; last observation: {seen}")
            time.sleep(interval)

    def dead(self) -> list[str]:
        """A line per node that ended without the harness ending it, not by Kafka's own doing (``Node.killed``): a
        harness failure, never a behaviour of Kafka."""
        return [line for n in [self.controller, *self.brokers.values()] if n is not None and (line := n.killed())]

    def exits(self) -> list[str]:
        """A line per broker that exited by itself (Kafka's own doing, judged by the model): how it ended and its
        last error, for a report to show beside a disagreement."""
        return [line for n in self.brokers.values() if n is not None and not n.up and (line := n.died())]

    def logs(self) -> dict[str, Path]:
        """Every node's server log that exists, by node name (``controller``, ``broker-0``, ...)."""
        nodes = [self.controller, *self.brokers.values()]
        return {("controller" if n.kind == "controller" else f"broker-{n.id}"): n.log for n in nodes
                if n is not None and n.log.exists()}

    def server_log(self, node: int) -> Path:
        """The server log of a broker (its id) or of the controller (config.CONTROLLER_ID)."""
        return (self.controller if node == config.CONTROLLER_ID else self._broker(node)).log
