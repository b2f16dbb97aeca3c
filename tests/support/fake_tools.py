"""Fake `mvn`, `java` and `javac` on PATH for `jbodcheck kafka fetch` and the harness's fetch
(realkafka/cluster/release.py) without Maven Central: each a shell script that records its arguments."""
from __future__ import annotations

import os
from pathlib import Path

# What Maven 3.8 prints for a release Maven Central does not serve (`kafka fetch 9.9.9`, 2026-12).
NOT_SERVED = ("[ERROR] Failed to execute goal on project realkafka-classpath: Could not resolve dependencies for "
              "project jbodcheck:realkafka-classpath:pom:0: The following artifacts could not be resolved: "
              "org.apache.kafka:kafka_2.13:jar:{v}, org.apache.kafka:kafka-metadata:jar:{v}: Could not find artifact "
              "org.apache.kafka:kafka_2.13:jar:{v} in central (https://repo.maven.apache.org/maven2) -> [Help 1]\n"
              "[ERROR] \n[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.\n")


def fake_tools(tmp_path: Path, mvn: str) -> dict:
    """A bin directory with ``mvn`` running the shell text ``mvn`` (after appending its arguments to
    ``calls``), and ``java``/``javac`` that do nothing; ``env``: the variables that put it first on PATH (no
    JAVA_HOME), with a Kafka cache of its own (``cache``). Returns {"env", "calls", "cache", "bin"}."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "mvn-calls"
    scripts = {"mvn": f'echo "$@" >> {calls}\n{mvn}\n', "java": "exit 0\n", "javac": "exit 0\n"}
    for name, body in scripts.items():
        path = bin_dir / name
        path.write_text("#!/bin/sh\n" + body)
        path.chmod(0o755)
    cache = tmp_path / "cache"
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "JBODCHECK_KAFKA_CACHE": str(cache),
           "JAVA_HOME": str(tmp_path / "no-jdk")}
    return {"env": env, "calls": calls, "cache": cache, "bin": bin_dir}


def mvn_calls(tools: dict) -> list[str]:
    return tools["calls"].read_text().splitlines() if tools["calls"].exists() else []
