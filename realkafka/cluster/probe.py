"""The Python side of the probe (realkafka/java/jbodcheck/Probe.java): one JVM per cluster, asked in JSON lines.

A reader thread moves the probe's answers into a queue, so that every call has a timeout: a probe that hangs
(an Admin call to a stopped controller) is a HarnessError naming the call, never a hung harness.
"""
from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path

from . import processes
from .errors import HarnessError

START_TIMEOUT = 120           # a JVM on a loaded 2-core machine


class ProbeError(Exception):
    """Kafka answered a probe call with an error (an Admin exception): the call's one-line error."""


class Probe:
    def __init__(self, java: str, classpath: str, bootstrap: str, workdir: Path, jvm_options: list[str]):
        self.log_path = workdir / "probe.log"
        self._stderr = open(self.log_path, "ab")
        self.proc = processes.spawn([java, *jvm_options, "-cp", classpath, "jbodcheck.Probe", bootstrap],
                                    cwd=workdir, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr)
        self._answers: queue.Queue = queue.Queue()
        self._next = 0
        threading.Thread(target=self._read, name="jbodcheck-probe-reader", daemon=True).start()
        first = self._get(START_TIMEOUT, "start")
        if not first.get("ready"):
            raise HarnessError(f"the probe started with an unexpected line {first!r} (see {self.log_path})")

    def _read(self) -> None:
        for line in self.proc.stdout:
            try:
                self._answers.put(json.loads(line))
            except ValueError:
                self._answers.put({"garbled": line.decode(errors="replace")})
        self._answers.put(None)            # end of output: the probe died

    def _get(self, timeout: float, what: str) -> dict:
        try:
            answer = self._answers.get(timeout=timeout)
        except queue.Empty:
            raise HarnessError(f"the probe did not answer {what} within {timeout:.0f} s (see {self.log_path})") from None
        if answer is None:
            raise HarnessError(f"the probe ended during {what} (exit code {self.proc.poll()}; see {self.log_path})")
        return answer

    def call(self, op: str, timeout: float = 60, **args):
        """The result of one call; ProbeError when Kafka answered with an error."""
        if self.proc.poll() is not None:
            raise HarnessError(f"the probe is not running (exit code {self.proc.returncode}; see {self.log_path})")
        self._next += 1
        request = {"id": self._next, "op": op, "timeout_ms": int(timeout * 1000), **args}
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        self.proc.stdin.flush()
        while True:
            answer = self._get(timeout + 30, op)
            if answer.get("id") == self._next:
                break                      # (an earlier call's late answer is dropped)
        if not answer.get("ok"):
            raise ProbeError(f"{op}: {answer.get('error')}")
        return answer.get("result")

    def close(self) -> None:
        processes.kill(self.proc)          # nothing of the probe's state is worth a graceful close
        self._stderr.close()
