"""The pieces every role of a real cluster shares (docs/realkafka.md, "Roles"): one JVM of the cluster (``Node``),
the JVMs' options, the file names the harness reads and the small helpers of its set-up."""
from __future__ import annotations

import base64
import os
import re
import secrets
import signal
import socket
import subprocess
from pathlib import Path

from .errors import HarnessError
from .probe import ProbeError

METADATA_PARTITION = "__cluster_metadata-0"
JVM_OPTIONS = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData", "-Xss512k",
               "-Djava.awt.headless=true"]
_EXCEPTION_LINE = re.compile(r"^(Caused by: )?[\w.$]+(Exception|Error)(: .*)?$")
# With patch jars, each node's JVM logs every class it loads and where from, to this file in the node's directory
# (%p: the JVM's pid): realkafka/patches/loaded.py checks that the patched classes came from the patch jars.
CLASS_LOAD_LOG = "class-load-%p.log"
PARTITION_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)(?:\.(?P<uid>[0-9a-f]{32})-(?P<kind>future|delete|stray))?$")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def random_uuid() -> str:
    """A Kafka Uuid in its base64 text form (as ``kafka-storage random-uuid`` prints), never one of the reserved
    ids (their first 8 bytes are zero) and never starting with "-" (a command-line option)."""
    while True:
        raw = secrets.token_bytes(16)
        text = base64.urlsafe_b64encode(raw).decode().rstrip("=")
        if raw[:8] != bytes(8) and not text.startswith("-"):
            return text


def read_properties(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        if "=" in line and not line.lstrip().startswith("#"):
            k, _, v = line.partition("=")
            out[k.strip()] = v.strip()
    return out



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
            errors = [line for line in lines if " ERROR " in line or " FATAL " in line]
            last = errors[-1][:300] if errors else ""
            # the exception's own line (its class and message; the innermost cause is the last), not its stack
            causes = [line.strip() for line in lines if _EXCEPTION_LINE.match(line.strip())]
            cause = causes[-1][:300] if causes else ""
            tail = [line[:200] for line in lines[-2:]]
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


def point_at_removed_logs(error: BaseException | None, root: Path | None, keep: bool) -> None:
    """An error that names a file of the cluster's directory, which ``stop`` has just removed (no ``keep``), says
    to re-run with ``--keep`` to keep it instead."""
    if keep or root is None or not isinstance(error, (HarnessError, ProbeError)) or not error.args:
        return
    text = str(error.args[0])
    prefix = re.escape(str(root) + os.sep)
    new = re.sub(rf"see {prefix}([^\s:;,)]+)", r"its log \1 is removed: re-run with --keep to keep it", text)
    new = re.sub(rf"{prefix}([^\s:;,)]+)", r"\1 (removed; --keep keeps it)", new)
    error.args = (new, *error.args[1:])

