"""The real-cluster harness in named roles, as Jepsen names them (docs/realkafka.md, "Roles"): the ``Lifecycle`` of
the cluster (Jepsen's db), the ``Nemesis`` that injects its faults and holds, the ``Client`` that asks it what a
Kafka client asks, and the ``Observer`` that reads what it did (the checker's input; the model's side of the check
is realkafka/driver/). A cluster kind implements the four (KRaft: cluster.py, ZooKeeper mode: zk.py) and declares
its optional ``capabilities``, which the driver and the campaigns read instead of probing for methods."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Protocol, runtime_checkable

# Every optional capability a cluster kind may declare: name -> what it is. A driven act that needs one names it
# (realkafka/driver/mapping.py ``Handler.needs``); a run that needs one its cluster lacks is refused before it starts.
CAPABILITIES = {
    "replace_dir": "a new, formatted disk in place of a failed dir, its broker down (Nemesis.replace_dir)",
    "remove_dir": "a dir taken out of a stopped broker's log.dirs (Nemesis.remove_dir)",
    "delete_topic": "Admin deleteTopics (Client.delete_topic)",
    "upgrade_metadata_version": "Admin updateFeatures of metadata.version (Client.upgrade_metadata_version)",
    "hold_requests": "the request gate: a request denied or delayed at a node until released (Nemesis.hold)",
    "hold_controller": "the controller process stopped (SIGSTOP) until released (Nemesis.hold_controller)",
    "hold_answers": "the controller's answers to AssignReplicasToDirs held by the answer proxy (Nemesis.hold_answers)",
    "move_controller": "a controller re-election forced by deleting /controller (Nemesis.move_controller)",
    "metadata_log": "the controller's metadata log, record by record (Observer.metadata_records)",
    "server_log": "a node's server log, read for what Kafka logged (Lifecycle.server_log)",
}


def unknown_capabilities(names) -> list[str]:
    """The names among ``names`` that no cluster kind can declare (a typo in a declaration or a ``needs``)."""
    return sorted(n for n in names if n not in CAPABILITIES)


def has(cluster, capability: str) -> bool:
    """Whether ``cluster`` (an instance or a cluster kind) declares ``capability``; one that declares none has none."""
    if capability not in CAPABILITIES:
        raise ValueError(f"no harness capability {capability!r} (realkafka/cluster/roles.py CAPABILITIES)")
    return capability in getattr(cluster, "capabilities", frozenset())


@runtime_checkable
class Lifecycle(Protocol):
    """Start the cluster, restart a broker, stop it all (also on an exception or Ctrl-C), and say how nodes ended."""

    def start(self): ...
    def stop(self) -> None: ...
    def restart(self, b: int, *, wait: str | None = "unfenced", timeout: float | None = None) -> None: ...
    def dead(self) -> list[str]: ...
    def exits(self) -> list[str]: ...
    def logs(self) -> dict[str, Path]: ...


@runtime_checkable
class Nemesis(Protocol):
    """The faults (a dir failed or repaired, a broker crashed or shut down) and the holds on requests; the optional
    ones (replace_dir, remove_dir, hold_answers, move_controller, ...) only where ``capabilities`` says."""

    def fail_dir(self, b: int, d: int, *, wait: bool = True, timeout: float = 60) -> None: ...
    def repair_dir(self, b: int, d: int) -> None: ...
    def crash(self, b: int) -> None: ...
    def controlled_shutdown(self, b: int, *, timeout: float = 120) -> None: ...
    def hold(self, api: str, **where) -> None: ...
    def release(self, api: str | None = None, **where) -> None: ...


@runtime_checkable
class Client(Protocol):
    """What a Kafka client asks of the cluster: topics, reassignments, moves between dirs, records in and out."""

    def create_topic(self, topic: str, assignment, **options) -> None: ...
    def reassign(self, topic: str, partition: int, replicas: list[int] | None) -> None: ...
    def alter_replica_log_dir(self, topic: str, partition: int, *, broker: int, dir: int) -> None: ...
    def produce(self, topic: str, partition: int, value: bytes, *, timeout: float = 30): ...
    def send(self, topic: str, partition: int, value: bytes, *, timeout: float = 30): ...
    def consume(self, topic: str, partition: int, *, timeout: float = 30): ...


@runtime_checkable
class Observer(Protocol):
    """The cluster now, and waits on it."""

    def observe(self, *, topics: list[str] | None = None, light: bool = False): ...
    def wait_until(self, predicate: Callable, *, timeout: float = 60, what: str, interval: float = 0.5,
                   light: bool = False): ...
