"""Starting (and stopping) Spark for the engine: a plain SparkContext, quiet, with the settings that matter.

When this process launches the JVM (the usual case: ``jbodcheck explore --engine spark``), the JVM's own
output (Spark's log lines, Java warnings) goes to a log file rather than the terminal; it is deleted at exit
unless Spark failed, in which case the one-line error names it. Under ``spark-submit`` the JVM already
exists: its logging is spark-submit's, quietened to WARN unless the user set ``spark.log.level``.
"""
from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile

import attrs

from .options import DEFAULT_CONF, LOCAL_CONF, PYTHON, SparkOptions, SparkSetupError, is_local

_JAVA_OPTIONS = "spark.driver.extraJavaOptions"


@attrs.define
class SparkHandle:
    sc: object                      # pyspark.SparkContext
    owned: bool                     # this handle started it (and stops it)
    log_path: str | None = None     # where the JVM's output goes, when this process launched it

    def stop(self) -> None:
        if self.owned and self.sc is not None:
            try:
                self.sc.stop()
            except Exception:  # noqa: BLE001 - cleanup only: the search's result (or failure) is already decided
                # A signal that broke a py4j call leaves its connection out of step, and stopping then fails with
                # whatever the next answer parses to (seen: KeyError 'c'); the JVM is ended below all the same.
                pass
            if self.log_path is not None:
                end_jvm()
        self.sc = None


# How long the JVM may take to exit once its stdin closed (its shutdown hooks: about 3 s) before it is terminated.
JVM_EXIT_S = 20.0


def end_jvm() -> None:
    """End the JVM this process launched (pyspark's gateway) and wait for it, so that it does not outlive
    jbodcheck: pyspark leaves it to notice, after Python exited, that its stdin closed (about 3 s later, by
    which time the caller has reported its exit code). Closing its stdin is how Spark's PythonGatewayServer is
    told to exit; it is terminated, then killed, if it does not."""
    import subprocess

    from pyspark import SparkContext

    gateway = SparkContext._gateway
    proc = getattr(gateway, "proc", None)
    if gateway is None:
        return
    try:
        gateway.shutdown()
    except Exception:  # noqa: BLE001 - the connection may be broken already
        pass
    if proc is not None:
        try:
            if proc.stdin is not None:
                proc.stdin.close()
            proc.wait(timeout=JVM_EXIT_S)
        except (OSError, subprocess.TimeoutExpired):
            proc.terminate()
            try:
                proc.wait(timeout=JVM_EXIT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    SparkContext._gateway = None
    SparkContext._jvm = None


def one_line(error: BaseException) -> str:
    """The first line of an exception's message; for a Java exception, its own message."""
    java = getattr(error, "java_exception", None)
    text = None
    if java is not None:
        try:
            text = java.getMessage() or java.toString()
        except Exception:  # noqa: BLE001 - the JVM may be gone
            text = None
    if not text:
        text = str(error) or type(error).__name__
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


def settings_for(options: SparkOptions, master: str | None) -> dict:
    """Our defaults, then the local-mode ones, then the user's --spark-conf (driver Java options are joined)."""
    conf = dict(DEFAULT_CONF)
    if is_local(master):
        conf.update(LOCAL_CONF)
    for key, value in options.conf.items():
        if key == _JAVA_OPTIONS and key in conf:
            conf[key] = f"{conf[key]} {value}"
        else:
            conf[key] = value
    return conf


_LOG_DIRS: list[str] = []
_KEEP_LOGS = False


def _remove_logs() -> None:
    if not _KEEP_LOGS:
        for path in _LOG_DIRS:
            shutil.rmtree(path, ignore_errors=True)


def start(options: SparkOptions, reclaim=lambda: None) -> SparkHandle:
    """A SparkContext for the engine: the active one if this process has one, else a new one. ``reclaim``: puts
    the caller's signal handlers back after the new SparkContext set its own."""
    global _KEEP_LOGS
    try:
        from pyspark import SparkConf, SparkContext
        from pyspark.java_gateway import launch_gateway
    except ImportError as e:
        raise SparkSetupError(f"the Spark engine needs pyspark (pip install 'jbodcheck[spark]'): {e}") from None

    active = SparkContext._active_spark_context
    if active is not None:
        return SparkHandle(active, owned=False)

    submitted = "PYSPARK_GATEWAY_PORT" in os.environ      # running under spark-submit: the JVM exists
    master = options.master or (None if submitted else "local[*]")
    log_path = None
    try:
        if master is None:                                 # spark-submit's --master
            SparkContext._ensure_initialized()
            master = SparkConf().get("spark.master", None) or "local[*]"
        settings = settings_for(options, master)
        if settings.get(PYTHON) and not submitted:
            os.environ["PYSPARK_PYTHON"] = settings[PYTHON]  # as spark-submit does; SparkContext reads only this
        elif is_local(master) and "PYSPARK_PYTHON" not in os.environ and PYTHON not in settings:
            os.environ["PYSPARK_PYTHON"] = sys.executable  # workers: this interpreter, with this install
        if SparkContext._gateway is None and not submitted:
            log_dir = tempfile.mkdtemp(prefix="jbodcheck-spark-")
            if not _LOG_DIRS:
                atexit.register(_remove_logs)
            _LOG_DIRS.append(log_dir)
            log_path = os.path.join(log_dir, "spark-driver.log")
            launch = SparkConf(loadDefaults=False)
            launch.setAll(settings.items())
            launch.setMaster(master)
            with open(log_path, "ab") as log:
                gateway = launch_gateway(launch, popen_kwargs={"stdout": log, "stderr": log})
            SparkContext._ensure_initialized(gateway=gateway)
        else:
            SparkContext._ensure_initialized()
        conf = SparkConf()          # backed by the JVM: spark-submit's and spark-defaults' settings included
        for key, value in settings.items():
            if key in options.conf:
                conf.set(key, value)
            else:
                conf.setIfMissing(key, value)
        conf.setMaster(master)
        sc = SparkContext(conf=conf)
        reclaim()       # SparkContext sets a SIGINT handler that calls the JVM: the caller's only sets a flag
    except Exception as e:  # noqa: BLE001 - any failure to start is one line for the user
        _KEEP_LOGS = log_path is not None
        where = f" (Spark's log: {log_path})" if log_path else ""
        raise SparkSetupError(f"cannot start Spark with --master {master or '(spark-submit)'}: "
                              f"{one_line(e)}{where}") from None
    _quiet_expected_warnings(sc)
    return SparkHandle(sc, owned=True, log_path=log_path)


def _quiet_expected_warnings(sc) -> None:
    """Each level unpersists the previous one, which Spark warns about for locally checkpointed RDDs."""
    try:
        jvm = sc._jvm
        jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(
            "org.apache.spark.api.python.PythonRDD", jvm.org.apache.logging.log4j.Level.ERROR)
    except Exception:  # noqa: BLE001 - another logging backend: the warnings stay
        pass


def keep_logs() -> None:
    """Keep the JVM's log file after exit (called when a run fails)."""
    global _KEEP_LOGS
    _KEEP_LOGS = True
