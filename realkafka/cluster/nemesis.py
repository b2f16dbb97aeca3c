"""The nemesis role of a real cluster (docs/realkafka.md, "Roles"): the faults it injects (a failed, repaired,
replaced or removed dir; a crash; a controlled shutdown; a held controller) and the holds on its requests (the
gate, docs/realkafka.md "The gate") and on the controller's answers (the answer proxy, answers.py)."""
from __future__ import annotations

import os
import re
import signal
import subprocess

from . import config, processes
from .errors import HarnessError
from .node import read_properties

def api_name(api: str) -> str:
    """Kafka's ApiKeys name: "AssignReplicasToDirs" or "ASSIGN_REPLICAS_TO_DIRS" -> ASSIGN_REPLICAS_TO_DIRS."""
    if "_" in api or api.isupper():
        return api.upper()
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", api).upper()


# Requests a broker sends to the controller (the gate denies them at the controller by default).
TO_CONTROLLER = {"ASSIGN_REPLICAS_TO_DIRS", "BROKER_HEARTBEAT", "BROKER_REGISTRATION", "ALTER_PARTITION",
                 "UNREGISTER_BROKER"}



class ClusterNemesis:
    """Faults and holds; a broker's restart is the lifecycle's (lifecycle.py)."""

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
        props = read_properties(node.properties)
        props["log.dirs"] = ",".join(str(p) for i, p in enumerate(node.dirs) if i not in node.removed)
        config.write_properties(node.properties, props)
        self._log(f"cluster: broker {b}'s dir {d} removed from its log.dirs")

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
