"""The findings' markers (docs/model.md, docs/kraft.md, docs/findings/): read and run as tests
(docs/testing.md). A marker is an HTML comment on one line before a finding's text:

    <!-- finding: jbodcheck explore --preset tiny ... | result violation | invariant ID | steps 6 | names A; B -->

Fields after the command, separated by `|`: `result` (ok, violation, bounded), `invariant` (the violated or
inconclusive property), `steps` (the trace's steps: the shortest, as BFS prints it), `names` (step labels, `;`
between them, that occur in this order in the trace; a label matches a step whose action is that label, with or
without the eagerly applied UpdateMetadata), `loop` (a lasso's loop_start), `states` (distinct states), `depth`,
`thorough` (a run of more than about 30 s: run only with JBODCHECK_PROFILE=thorough, tests/support/profiles.py). The
command is run (as `python -m explorer`, with `--workers 1` for `explore` when it gives none) with `--json`,
and the report must show each field; the text after the marker (up to the next marker or heading) must state
the same step count ("N steps" or "N-step"); markers on consecutive lines share the text after the last one.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys

import pytest

from support.helpers import REPO
from support.profiles import THOROUGH

MARK = re.compile(r"^<!-- finding: (.*?) -->[ \t]*$", re.M)
EXIT = {"ok": 0, "bounded": 0, "violation": 1}


def markers(path) -> list[tuple[str, int, dict, str]]:
    """(file name, line, fields, the text after the marker up to the next marker or heading) per marker."""
    text = path.read_text()
    found = list(MARK.finditer(text))
    out = []
    for k, m in enumerate(found):
        command, *pairs = [part.strip() for part in m.group(1).split(" | ")]
        fields = {"command": command}
        for pair in pairs:
            key, _sep, value = pair.partition(" ")
            fields[key] = value.strip()
        last = k      # markers on consecutive lines share the text after the last of them
        while last + 1 < len(found) and found[last + 1].start() == found[last].end() + 1:
            last += 1
        begin = found[last].end()
        end = found[last + 1].start() if last + 1 < len(found) else len(text)
        heading = re.search(r"^#", text[begin:end], re.M)
        after = text[begin: begin + heading.start() if heading else end]
        out.append((path.name, text[:m.start()].count("\n") + 1, fields, after))
    return out


def label(action: str | None) -> str | None:
    return None if action is None else action.split(" + UpdateMetadata at ")[0]


def in_order(names: list[str], labels: list[str]) -> bool:
    it = iter(labels)
    return all(any(label == name for label in it) for name in names)


def check_finding(name, line, fields, after, tmp_path):
    """Run a marker's command and check its report against the marker's fields."""
    if "thorough" in fields and not THOROUGH:
        pytest.skip("over about 30 s: JBODCHECK_PROFILE=thorough")
    if "steps" in fields:
        n = fields["steps"]
        assert re.search(rf"\b{n}(\s+|-)step", after), f"{name}:{line}: the text does not say {n} steps"
    args = shlex.split(fields["command"])[1:]
    if args[0] == "explore" and "--workers" not in args:
        args += ["--workers", "1"]
    report = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if k != "JBODCHECK_PLUGINS"}
    quiet = ["-q"] if args[0] == "explore" else []
    p = subprocess.run([sys.executable, "-m", "explorer", *args, *quiet, "--json", str(report)], capture_output=True,
                       text=True, cwd=REPO, env=env, timeout=3600)
    where = f"{name}:{line}: {fields['command']}"
    assert p.returncode == EXIT[fields["result"]], (where, p.returncode, p.stderr[-500:])
    data = json.loads(report.read_text())
    assert data["result"] == fields["result"], where
    if "states" in fields:
        assert data["distinct_states"] == int(fields["states"].replace(",", "")), where
    if "depth" in fields:
        assert data["depth"] == int(fields["depth"]), where
    if "invariant" not in fields:
        assert data["violations"] == [], where
        return
    lassos = data["violations"] + data.get("inconclusive", [])
    chosen = [v for v in lassos if v["invariant"] == fields["invariant"]]
    assert chosen, (where, [v["invariant"] for v in lassos])
    v = chosen[0]
    if fields["result"] == "bounded":
        assert v in data["inconclusive"], where
    labels = [label(step["action"]) for step in v["trace"][1:]]
    if "steps" in fields:
        assert len(labels) == int(fields["steps"]), (where, len(labels), labels)
    if "names" in fields:
        names = [n.strip() for n in fields["names"].split(";")]
        assert in_order(names, labels), (where, names, labels)
    if "loop" in fields:
        assert v["loop_start"] == int(fields["loop"]), where
