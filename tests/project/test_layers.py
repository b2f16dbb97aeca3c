"""The layering is checked, not hoped for (docs/architecture.md): import-linter's contracts in pyproject.toml
([tool.importlinter]), no import cycle between the project's modules, and no Kafka word in the code of the
kernel or of the engines. Each check is also shown to fail on a tree that breaks it."""
from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path

import grimp
import pytest

from support.helpers import REPO

PACKAGES = ("model", "invariants", "explorer", "spark_explore", "proofs", "realkafka")
# No engine names a Kafka concept (the words; Spark's own partitions are Spark's), and the kernel not even
# the model's nouns: a kernel that says "partition" or "leader" has not separated the protocol from the machinery.
ENGINE_WORDS = re.compile(r"leaderandisr|updatemetadata|broker|controller|kafka|zookeeper", re.I)
KERNEL_WORDS = re.compile(ENGINE_WORDS.pattern + r"|partition|replica|\bisr|leader", re.I)
KERNEL = ("model/spec",)
ENGINES = ("spark_explore", *(f"explorer/{m}.py" for m in (
    "core", "search", "parallel", "liveness", "por", "checkpoint", "visited", "signals")))


def lint(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command as c;"
                           " sys.exit(c.main(standalone_mode=False) or 0)", "--no-cache"],
                          cwd=root, capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})


def test_import_contracts_hold():
    p = lint(REPO)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]
    assert "BROKEN" not in p.stdout and "KEPT" in p.stdout


def test_import_contracts_notice_an_upward_import(tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(REPO, tree, ignore=shutil.ignore_patterns(".git", "__pycache__", "*.egg-info", "tests", "docs"))
    kernel_module = tree / "model" / "spec" / "rule.py"
    kernel_module.write_text(kernel_module.read_text() + "\nimport explorer.catalog  # planted\n")
    p = lint(tree)
    assert p.returncode != 0 and "BROKEN" in p.stdout, p.stdout[-3000:]
    assert "model.spec.rule -> explorer.catalog" in p.stdout


def cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        m = stack.pop()
                        on_stack.discard(m)
                        component.append(m)
                        if m == node:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))
    return out


def test_no_import_cycle():
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    # A package's __init__ re-exporting its own modules is not a cycle of the design.
    for m in PACKAGES:
        for child in list(graph.find_modules_directly_imported_by(m)):
            if child.startswith(m + "."):
                graph.remove_import(importer=m, imported=child)
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    graph = grimp.ImportGraph()
    for a, b in (("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.c", "p.d")):
        graph.add_import(importer=a, imported=b)
    assert cycles(graph) == [["p.a", "p.b", "p.c"]]


def code_words(source: str, words=KERNEL_WORDS) -> list[tuple[int, str]]:
    """(line, token) of the names and non-docstring strings of a module that contain one of ``words``."""
    found, previous = [], tokenize.INDENT
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        docstring = tok.type == tokenize.STRING and previous in (tokenize.INDENT, tokenize.NEWLINE, tokenize.NL,
                                                                  tokenize.DEDENT)
        if tok.type in (tokenize.NAME, tokenize.STRING) and not docstring and words.search(tok.string):
            found.append((tok.start[0], tok.string))
        if tok.type not in (tokenize.COMMENT, tokenize.NL):
            previous = tok.type
    return found


def _files(places) -> list[Path]:
    out = []
    for place in places:
        path = REPO / place
        out += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return [p for p in out if p.exists()]


@pytest.mark.parametrize("path", _files(KERNEL), ids=lambda p: str(p.relative_to(REPO)))
def test_no_kafka_word_in_the_kernels_code(path):
    assert code_words(path.read_text(), KERNEL_WORDS) == []


@pytest.mark.parametrize("path", _files(ENGINES), ids=lambda p: str(p.relative_to(REPO)))
def test_no_kafka_word_in_the_engines_code(path):
    assert code_words(path.read_text(), ENGINE_WORDS) == []


def test_the_word_check_sees_code_and_skips_docs():
    source = '"""About the broker."""\n# the controller\nx = broker_count  # kafka\ny = "LeaderAndIsr"\nz = partitions\n'
    assert code_words(source, ENGINE_WORDS) == [(3, "broker_count"), (4, '"LeaderAndIsr"')]
    assert code_words(source, KERNEL_WORDS)[-1] == (5, "partitions")
