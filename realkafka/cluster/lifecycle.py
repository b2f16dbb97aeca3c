"""The lifecycle role of a real KRaft cluster (docs/realkafka.md, "Roles"): its layout, format and start, a broker's
restart, the stop that removes it all, and how its nodes ended (``dead``, ``exits``) with their logs."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import attrs

from . import config, formatted, processes, sharing
from .answers import AnswerProxy
from .errors import HarnessError
from .node import CLASS_LOAD_LOG, JVM_OPTIONS, Node, free_port, point_at_removed_logs, random_uuid, read_properties
from .observation import DirNames
from .probe import Probe
from .release import fetch, java


class ClusterLifecycle:
    """Start, restart and stop (``with cluster:``: started, every broker registered and unfenced; stopped and removed
    at the end, also on an exception or Ctrl-C). The cluster's other roles (nemesis.py, client.py, observer.py)
    share its state: the nodes, the probe, the dirs' ids."""

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, _type, error, _tb) -> None:
        root = self.root
        try:
            if error is None:
                self._finish_training()
        finally:
            self.stop()
        point_at_removed_logs(error, root, self.spec.keep)

    def start(self):
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
            point_at_removed_logs(e, root, spec.keep)
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
        self.cluster_id = random_uuid()
        self.gate_file, self.gate_log = root / "gate", root / "gate.log"
        controller_port = free_port()
        self._broker_port = {b: free_port() for b in range(spec.brokers)}
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
                props = read_properties(path / "meta.properties")
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
                                         new_id=random_uuid)
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
        other = type(self)(attrs.evolve(self.spec, formatted_copy=False, keep=False))
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


    def _broker(self, b: int) -> Node:
        if b not in self.brokers:
            raise ValueError(f"no broker {b} (brokers {list(self.brokers)})")
        return self.brokers[b]

    def dir_path(self, b: int, d: int) -> Path:
        node = self._broker(b)
        if not 0 <= d < len(node.dirs):
            raise ValueError(f"broker {b} has no dir {d} (dirs 0..{len(node.dirs) - 1})")
        return node.dirs[d]


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
