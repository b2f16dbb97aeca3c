"""Checkpoint and resume of the BFS engines (explorer/checkpoint.py; docs/cli.md, "Checkpoint and resume").

A search stopped early (a bound, an interrupt) and resumed from its checkpoint ends with the uninterrupted
run's report: counts, depth, coverage and violations with their traces, on one or two workers either side.
Small models only (tiny with one fault: about 2,000 states over 20 levels), in this process.
"""
from __future__ import annotations

import json
import os
import signal

import numpy as np
import pytest

import explorer.checkpoint as checkpoint
import explorer.core as core
from explorer import __version__

from support.helpers import device_fills_after_the_check, in_process

ONE_FAULT = ("--preset", "tiny", "--max-faults", "1")        # 2,121 distinct states, depth 20
LEGACY = ("--preset", "tiny", "--variant", "legacy")         # a violation at depth 4


def explore(capsys, tmp_path, name, *args, expect=(0, 1)):
    """Run `explore -q ARGS --json` in this process; returns (exit code, report, stderr)."""
    path = tmp_path / f"{name}.json"
    code, out, err = in_process(capsys, "explore", "-q", "--json", path, *args)
    assert code in expect, (code, out[-2000:], err[-2000:])
    return code, json.loads(path.read_text()), err


def same_search(report: dict, reference: dict) -> None:
    """The two reports tell the same search (the time and the worker count aside)."""
    strip = ("elapsed_s", "workers")
    assert {k: v for k, v in report.items() if k not in strip} == {k: v for k, v in reference.items() if k not in strip}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The uninterrupted runs, one per configuration (one worker)."""
    from explorer.cli import main

    out = {}
    for name, args in (("one-fault", ONE_FAULT), ("legacy", LEGACY),
                       ("legacy-all", LEGACY + ("--all-violations", "--max-depth", "6"))):
        path = tmp_path_factory.mktemp("reference") / f"{name}.json"
        with pytest.raises(SystemExit):
            main(["explore", "-q", "--workers", "1", "--json", str(path), *args])
        out[name] = json.loads(path.read_text())
    assert (out["one-fault"]["distinct_states"], out["one-fault"]["depth"]) == (2121, 20)
    return out


@pytest.mark.parametrize("writers, resumers, bound", [
    (1, 1, ("--max-depth", "8")),
    (2, 2, ("--max-states", "700")),      # stops inside a level: the checkpoint is that level's start
    (1, 2, ("--max-states", "1000")),
    (2, 1, ("--max-depth", "11")),
])
def test_a_bounded_run_resumed_ends_as_the_uninterrupted_run(capsys, tmp_path, reference, writers, resumers, bound):
    ck = tmp_path / "ck"
    _, bounded, err = explore(capsys, tmp_path, "bounded", *ONE_FAULT, "--workers", writers, "--checkpoint", ck,
                              *bound)
    assert bounded["result"] == "bounded" and ck.exists()
    assert f"continue with --resume {ck}" in err
    saved = checkpoint.read(str(ck)).snapshot
    assert saved.distinct <= bounded["distinct_states"] and saved.workers == writers
    _, resumed, _ = explore(capsys, tmp_path, "resumed", *ONE_FAULT, "--workers", resumers, "--resume", ck)
    same_search(resumed, reference["one-fault"])


@pytest.mark.parametrize("workers", [1, 2])
def test_an_interrupted_run_resumed_ends_as_the_uninterrupted_run(capsys, tmp_path, monkeypatch, reference, workers):
    """SIGINT in the middle of a level, after two checkpoints were written (one every level boundary): exit 130
    with a partial report, and the resumed run gives the uninterrupted run's report."""
    ck = tmp_path / "ck"
    written = []
    write, progress = checkpoint.write, core.Run.progress

    def counting_write(*args):
        write(*args)
        written.append(args[2].depth)

    def interrupting_progress(self, *args):
        if len(written) >= 3 and not getattr(self, "interrupt_sent", False):
            self.interrupt_sent = True
            os.kill(os.getpid(), signal.SIGINT)
        return progress(self, *args)

    monkeypatch.setattr(checkpoint, "write", counting_write)
    monkeypatch.setattr(core.Run, "progress", interrupting_progress)
    _, partial, err = explore(capsys, tmp_path, "partial", *ONE_FAULT, "--workers", workers, "--checkpoint", ck,
                              "--checkpoint-every", "0", expect=(130,))
    assert partial["result"] == "interrupted" and partial["signal"] == 2
    assert "interrupted by signal 2" in err and f"--resume {ck}" in err
    assert written[:3] == [0, 1, 2]          # every level boundary, then the one the interrupt wrote
    monkeypatch.undo()
    _, resumed, _ = explore(capsys, tmp_path, "resumed", *ONE_FAULT, "--workers", workers, "--resume", ck)
    same_search(resumed, reference["one-fault"])


def test_checkpoints_at_every_level_leave_the_search_as_it_was(capsys, tmp_path, reference):
    """The workers' dumps at each level boundary change nothing; the last one resumes to the same end."""
    ck = tmp_path / "ck"
    _, report, err = explore(capsys, tmp_path, "every", *ONE_FAULT, "--workers", 2, "--checkpoint", ck,
                             "--checkpoint-every", "0")
    same_search(report, reference["one-fault"])
    assert checkpoint.read(str(ck)).snapshot.depth == 20 and "checkpoint" not in err
    _, resumed, _ = explore(capsys, tmp_path, "resumed", *ONE_FAULT, "--workers", 1, "--resume", ck)
    same_search(resumed, reference["one-fault"])


@pytest.mark.parametrize("workers", [1, 2])
def test_the_first_violation_and_its_trace_are_the_uninterrupted_runs(capsys, tmp_path, reference, workers):
    ck = tmp_path / "ck"
    explore(capsys, tmp_path, "bounded", *LEGACY, "--workers", 1, "--checkpoint", ck, "--max-depth", "2")
    code, resumed, _ = explore(capsys, tmp_path, "resumed", *LEGACY, "--workers", workers, "--resume", ck)
    assert code == 1 and resumed["violations"][0]["trace"] == reference["legacy"]["violations"][0]["trace"]
    same_search(resumed, reference["legacy"])


def test_violations_found_before_the_checkpoint_are_kept(capsys, tmp_path, reference):
    """--all-violations: a violation found at depth 4 is in the checkpoint of depth 5, trace and all."""
    ck = tmp_path / "ck"
    args = LEGACY + ("--all-violations",)
    explore(capsys, tmp_path, "bounded", *args, "--workers", 2, "--checkpoint", ck, "--max-depth", "5")
    saved = checkpoint.read(str(ck)).snapshot
    assert saved.depth == 5 and len(saved.violations) == 1 and len(saved.violations[0][2]) == 4
    _, resumed, _ = explore(capsys, tmp_path, "resumed", *args, "--workers", 1, "--resume", ck, "--max-depth", "6")
    same_search(resumed, reference["legacy-all"])


# ---- refusals ---------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A checkpoint of ONE_FAULT at depth 4."""
    from explorer.cli import main

    path = tmp_path_factory.mktemp("saved") / "ck"
    with pytest.raises(SystemExit):
        main(["explore", "-q", "--workers", "1", "--checkpoint", str(path), "--max-depth", "4", *ONE_FAULT])
    return path


def refused(capsys, *args) -> str:
    code, out, err = in_process(capsys, "explore", "-q", "--workers", "1", *args)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err + out, (code, err)
    return lines[0]


@pytest.mark.parametrize("args, words", [
    (("--preset", "tiny"), "--max-faults is 1 there, 2 here"),
    (ONE_FAULT + ("--variant", "kip112-no-isnew-check"), "--variant is kip112 there, kip112-no-isnew-check here"),
    (ONE_FAULT + ("--invariant", "no_recreate_with_bad_dir"), "the invariants checked is"),
    (ONE_FAULT + ("--no-symmetry",), "symmetry reduction is true there, false here"),
    (ONE_FAULT + ("--all-violations",), "--all-violations is false there, true here"),
    (ONE_FAULT + ("--por",), "--por is false there, true here"),
    (ONE_FAULT + ("--max-depth", "3"), "is at depth 4, beyond --max-depth 3"),
    (ONE_FAULT + ("--max-states", "50"), "not fewer than --max-states 50"),
])
def test_a_checkpoint_of_another_configuration_is_refused(capsys, saved, args, words):
    assert words in refused(capsys, *args, "--resume", saved)


def test_a_checkpoint_of_another_version_is_refused(capsys, tmp_path, saved):
    read = checkpoint.read(str(saved))
    other = tmp_path / "other"
    checkpoint.write(str(other), {**read.identity, "jbodcheck": "0.0.1"}, read.snapshot)
    line = refused(capsys, *ONE_FAULT, "--resume", other)
    assert f"written by jbodcheck 0.0.1, this is jbodcheck {__version__}" in line


@pytest.mark.parametrize("args, words", [
    (("--engine", "dfs", "--checkpoint", "ck"), "apply to --engine bfs only (not dfs)"),
    (("--engine", "random", "--resume", "ck"), "apply to --engine bfs only (not random)"),
    (("--engine", "spark", "--checkpoint", "ck"), "the Spark engine has --checkpoint-dir"),
    (("--checkpoint-every", "5"), "--checkpoint-every needs --checkpoint PATH"),
    (("--checkpoint", "/nonexistent-dir/ck"), "cannot write the checkpoint"),
    (("--liveness", "--checkpoint", "ck"), "no --engine, --max-depth, --max-states, --checkpoint or --resume"),
])
def test_checkpoint_options_out_of_place_are_refused(capsys, tmp_path, monkeypatch, args, words):
    monkeypatch.chdir(tmp_path)
    assert words in refused(capsys, *ONE_FAULT, *args)
    assert not (tmp_path / "ck").exists()


def test_a_checkpoint_that_cannot_be_written_is_a_warning(capsys, tmp_path, reference, monkeypatch):
    """The search goes on and reports as usual (the device filled up after the check: every write fails)."""
    device_fills_after_the_check(monkeypatch)
    code, report, err = explore(capsys, tmp_path, "full", *ONE_FAULT, "--workers", "1", "--checkpoint", "/dev/full",
                                "--checkpoint-every", "0")
    assert code == 0
    same_search(report, reference["one-fault"])
    assert "jbodcheck: warning: cannot write the checkpoint to /dev/full" in err


# ---- the file ---------------------------------------------------------------------------------------------------

def test_the_file_holds_the_boundary_compactly(saved):
    """Depth 4's boundary: every state found so far, its parent links and fingerprints, the frontier."""
    snap = checkpoint.read(str(saved)).snapshot
    assert snap.depth == 4 and snap.frontier_size == len(snap.states) > 0
    assert len(snap.fingerprints) == len(snap.parents) == len(snap.actions) == snap.distinct
    assert np.all(np.diff(snap.fingerprints.astype(np.float64)) > 0)
    # well under the 8 + 4 + 2 bytes a state of its arrays plus the frontier's states pickled one by one
    assert os.path.getsize(saved) < snap.distinct * 14 + 4096 + 400 * snap.frontier_size


def test_a_crafted_pickle_in_the_frontier_is_refused_before_it_runs(capsys, tmp_path, saved):
    """The frontier's blocks are unpickled with a restricted unpickler: only the model's state types."""
    read = checkpoint.read(str(saved))
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    import pickle
    snap = read.snapshot
    snap.frontier = [(np.arange(snap.frontier_size, dtype=np.int64), pickle.dumps(Evil()))]
    crafted = tmp_path / "crafted"
    checkpoint.write(str(crafted), read.identity, snap)
    line = refused(capsys, *ONE_FAULT, "--resume", crafted)
    assert "damaged checkpoint" in line and "posix.system" in line
    assert not marker.exists()
