"""--spark-conf spark.pyspark.python and spark.pyspark.driver.python outside spark-submit (docs/spark.md): a plain
SparkContext reads neither setting (spark-submit turns them into PYSPARK_PYTHON and PYSPARK_DRIVER_PYTHON), so
jbodcheck honours the executors' one itself and refuses a driver's one that is not the running interpreter."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from spark_explore.options import SparkSetupError, check_python_settings

from support.helpers import REPO


def _cli(*args, timeout=600):
    env = {k: v for k, v in os.environ.items() if k not in ("JBODCHECK_PLUGINS", "PYSPARK_PYTHON",
                                                           "PYSPARK_DRIVER_PYTHON", "PYSPARK_GATEWAY_PORT")}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run([sys.executable, "-m", "explorer", *map(str, args)], capture_output=True, text=True,
                          cwd=REPO, env=env, timeout=timeout)


def test_the_driver_python_may_be_this_interpreter(monkeypatch):
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    check_python_settings({"spark.pyspark.driver.python": sys.executable})


@pytest.mark.parametrize("conf, words", [
    ({"spark.pyspark.driver.python": "/no/such/python"}, ("outside spark-submit", "/no/such/python")),
    ({"spark.pyspark.python": " "}, ("needs a Python interpreter",)),
    ({"spark.pyspark.driver.python": ""}, ("needs a Python interpreter",)),
])
def test_python_settings_that_cannot_work_are_refused(monkeypatch, conf, words):
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    with pytest.raises(SparkSetupError) as e:
        check_python_settings(conf)
    for w in words:
        assert w in str(e.value)


def test_another_driver_python_is_bad_input_before_spark_starts():
    pytest.importorskip("pyspark")
    run = _cli("explore", "--preset", "tiny", "--engine", "spark", "--master", "local[2]", "-q",
               "--spark-conf", "spark.pyspark.driver.python=/no/such/python")
    assert run.returncode == 2, run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "spark.pyspark.driver.python" in lines[0], run.stderr


@pytest.mark.slow
@pytest.mark.long_run
def test_the_docs_recommendation_works_outside_spark_submit(tmp_path):
    """docs/spark.md: --spark-conf spark.pyspark.python=PYTHON. The executors must run that interpreter: here
    a wrapper that leaves a mark, then runs this Python."""
    pytest.importorskip("pyspark")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark needs Java 17+")
    used = tmp_path / "used"
    wrapper = tmp_path / "python-for-executors"
    wrapper.write_text(f'#!/bin/sh\ntouch "{used}"\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    assert "spark.pyspark.python=" in (REPO / "docs" / "spark.md").read_text()
    run = _cli("explore", "--preset", "tiny", "--max-depth", "3", "--engine", "spark", "--master", "local[2]", "-q",
               "--spark-conf", f"spark.pyspark.python={wrapper}")
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Result: ok" in run.stdout or "Result: bounded" in run.stdout, run.stdout[-2000:]
    assert used.exists(), "the executors did not run the interpreter of spark.pyspark.python"
