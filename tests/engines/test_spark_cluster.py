"""The Spark engine on a real standalone cluster on loopback: a master and one worker started with the
``spark-class`` launcher that the pyspark package ships, the CLI run against them as a user would, and the
executor's JVM killed mid-run: the run must still end with BFS's exact counts (docs/spark.md, "Executors lost").

The cluster lives for the module; its JVMs (master, worker, executors) are killed at the end.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

from support.profiles import THOROUGH

pyspark = pytest.importorskip("pyspark")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPARK_CLASS = os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-class")
COUNTS = ("result", "distinct_states", "states_generated", "depth", "coverage")
DEPTH = 8               # tiny to depth 8: 5,153 states, nine levels
KILL_AT = 4             # kill the executor once level 4 is done (levels 5 to 8 still to run)
START_TIMEOUT = 90      # seconds for the master and the worker to come up (the machine may be busy)
RUN_TIMEOUT = 600

pytestmark = pytest.mark.skipif(
    shutil.which("java") is None and not os.environ.get("JAVA_HOME") or not os.path.exists(SPARK_CLASS),
    reason="a standalone Spark cluster needs Java 17+ and the pyspark package's bin/spark-class")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


class Cluster:
    """A Spark master and one worker (2 cores) on 127.0.0.1, each in its own process group."""

    def __init__(self, base):
        self.base = str(base)
        self.work_dir = os.path.join(self.base, "work")
        self.port = _free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", SPARK_WORKER_DIR=self.work_dir,
                        SPARK_LOG_DIR=os.path.join(self.base, "logs"), PYTHONPATH=ROOT,
                        SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false",
                        PYSPARK_PYTHON=sys.executable)   # executors run this interpreter, on this checkout
        self.processes: list[subprocess.Popen] = []
        self.logs: list[str] = []

    def _launch(self, name: str, *args: str) -> None:
        log = os.path.join(self.base, f"{name}.log")
        self.logs.append(log)
        with open(log, "wb") as out:
            self.processes.append(subprocess.Popen([SPARK_CLASS, *args], stdout=out, stderr=subprocess.STDOUT,
                                                   env=self.env, start_new_session=True))

    def start(self) -> None:
        os.makedirs(self.work_dir)
        self._launch("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                     "--port", str(self.port), "--webui-port", str(_free_port()))
        self._wait(lambda: _listening(self.port), "the master to listen")
        self._launch("worker", "org.apache.spark.deploy.worker.Worker", self.url, "--host", "127.0.0.1",
                     "--cores", "2", "--memory", "2g", "--webui-port", str(_free_port()))
        self._wait(lambda: "Successfully registered with master" in self._log(1), "the worker to register")

    def _log(self, i: int) -> str:
        with open(self.logs[i], errors="replace") as f:
            return f.read()

    def _wait(self, ready, what: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while not ready():
            if any(p.poll() is not None for p in self.processes) or time.monotonic() > deadline:
                tail = "\n".join(self._log(len(self.logs) - 1).splitlines()[-15:])
                pytest.fail(f"timed out waiting for {what}:\n{tail}")
            time.sleep(0.2)

    def executors(self) -> list[int]:
        """The pids of this cluster's executor JVMs (their working directory is under our worker dir)."""
        pids = []
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    command = f.read()
                cwd = os.readlink(f"/proc/{name}/cwd")
            except OSError:
                continue
            if b"CoarseGrainedExecutorBackend" in command and cwd.startswith(self.work_dir + os.sep):
                pids.append(int(name))
        return pids

    def stop(self) -> None:
        for p in self.processes:
            _kill_group(p, signal.SIGTERM)
        for p in self.processes:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                _kill_group(p, signal.SIGKILL)
                p.wait(timeout=15)
        for pid in self.executors():        # an executor the worker did not take down with it
            os.kill(pid, signal.SIGKILL)


def _kill_group(process: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:
        pass


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    cluster = Cluster(tmp_path_factory.mktemp("spark-cluster"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def expected():
    """The local BFS's report on the same configuration."""
    proc = subprocess.run([sys.executable, "-m", "explorer", "explore", "--preset", "tiny", "--max-depth", str(DEPTH),
                           "--json", "-", "-q"], capture_output=True, text=True, cwd=ROOT, timeout=RUN_TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    return _counts(json.loads(proc.stdout))


def _explore(cluster: Cluster, *extra: str, kill_at: int | None = None) -> tuple[dict, list[str], list[int]]:
    """Run `jbodcheck explore --engine spark` against the cluster; with kill_at, SIGKILL the executors once the
    progress shows that level. Returns the JSON report, the progress lines and the killed pids."""
    command = [sys.executable, "-m", "explorer", "explore", "--preset", "tiny", "--engine", "spark",
               "--master", cluster.url, "--max-depth", str(DEPTH), "--json", "-",
               "--spark-conf", "spark.ui.enabled=false", *extra]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env=dict(cluster.env, TMPDIR=cluster.base), start_new_session=True)
    lines, killed = [], []
    try:
        for line in proc.stderr:
            lines.append(line.rstrip("\n"))
            if kill_at is not None and not killed and line.startswith("[spark] level "):
                if int(line.split()[2]) >= kill_at:
                    killed = cluster.executors()
                    for pid in killed:
                        os.kill(pid, signal.SIGKILL)
        out = proc.stdout.read()
        proc.wait(timeout=RUN_TIMEOUT)
    finally:
        if proc.poll() is None:
            _kill_group(proc, signal.SIGKILL)
    assert proc.returncode == 0, "\n".join(lines[-10:])
    assert "Traceback" not in "\n".join(lines)
    return json.loads(out), lines, killed


def _counts(report: dict) -> dict:
    return {k: report[k] for k in COUNTS}


@pytest.mark.long_run
def test_cluster_run_has_bfs_counts(cluster, expected):
    report, lines, _ = _explore(cluster)
    assert _counts(report) == expected
    assert report["spark"]["master"] == cluster.url and report["spark"]["recovery"] == "lineage"
    assert sum(line.startswith("[spark] level ") for line in lines) == DEPTH + 1


def _levels_after(lines: list[str], killed_after: int) -> list[int]:
    levels = [int(line.split()[2]) for line in lines if line.startswith("[spark] level ")]
    return [level for level in levels if level > killed_after]


@pytest.mark.skipif(not THOROUGH, reason="a second cluster run with an executor killed: 30 s to minutes; "
                                         "JBODCHECK_PROFILE=thorough")
def test_executor_killed_mid_run_recomputes_from_lineage(cluster, expected):
    report, lines, killed = _explore(cluster, kill_at=KILL_AT)
    assert killed, "an executor was running and was killed"
    assert _levels_after(lines, KILL_AT) == list(range(KILL_AT + 1, DEPTH + 1)), "levels ran after the kill"
    assert _counts(report) == expected


@pytest.mark.skipif(not THOROUGH, reason="a cluster run with an executor killed: 30 s to minutes; "
                                         "JBODCHECK_PROFILE=thorough")
def test_executor_killed_mid_run_recovers_from_a_reliable_checkpoint(cluster, expected, tmp_path):
    report, lines, killed = _explore(cluster, "--checkpoint-dir", str(tmp_path / "ckpt"), kill_at=KILL_AT + 1)
    assert killed
    assert _levels_after(lines, KILL_AT + 1) == list(range(KILL_AT + 2, DEPTH + 1))
    assert _counts(report) == expected
    assert report["spark"]["recovery"] == "reliable-checkpoint"
