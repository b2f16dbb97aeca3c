"""`reproduce --fix NAME` (and `conform --fix NAME`): a candidate fix on both sides, the model with the fix
(model/kraft/fixes.py) and the real cluster with the fix's patch of Kafka's code (realkafka/patches/) compiled
ahead of the release's jars; the class-loading log shows that each patched class came from its patch jar
(docs/fixes.md, "On Kafka's own code"). Imported only when the command runs."""
from __future__ import annotations

import click

from explorer.errors import JbodcheckFailure

from .exits import BadInput


def patch_files(fixes: tuple, release: str) -> tuple:
    """((fix, the patch's path in the repository, the Kafka file it changes), ...) for ``--fix``; bad input for an
    unknown fix or one with no patch for ``release``."""
    if not fixes:
        return ()
    from model.kraft.fixes import FIXES
    from realkafka.patches import SOURCES, patch_path, patched_releases

    out = []
    for fix in fixes:
        if fix not in FIXES:
            raise BadInput(f"--fix {fix}: no such candidate fix (known: {', '.join(FIXES)})")
        if release not in patched_releases(fix):
            have = patched_releases(fix)
            raise BadInput(f"--fix {fix}: no patch of Kafka's code for Kafka {release} ("
                           + (f"patched releases: {', '.join(have)}" if have else "the fix has no patch") + ")")
        out.append((fix, patch_path(fix, release), SOURCES[fix]))
    return tuple(out)


def _relative(path) -> str:
    parts = path.parts
    return "/".join(parts[parts.index("realkafka"):]) if "realkafka" in parts else str(path)


def fix_lines(patched: tuple, unfixed) -> list[str]:
    """The header's lines for the fixes: what each changes on both sides, and what the run without them shows."""
    if not patched:
        return []
    lines = [f"fix {fix}: the model with the fix, and Kafka with {_relative(patch)} ({source.path}) compiled ahead "
             "of its jars" for fix, patch, source in patched]
    shown = sorted(unfixed.target) if unfixed is not None else []
    lines.append("without the fix(es) the model's run shows: " + (", ".join(shown) if shown else "no violation"))
    return lines


def fixes_report(patched: tuple, unfixed) -> list[dict]:
    """The JSON report's ``fixes``: per fix its patch, the file it changes, the violation the run without the fixes
    shows (``without_fix``); the patch jar and the nodes that loaded its class are added after the run."""
    shown = sorted(unfixed.target) if unfixed is not None else []
    return [{"fix": fix, "patch": _relative(patch), "source": source.path, "class": source.class_name,
             "without_fix": shown, "jar": None, "loaded_by": []} for fix, patch, source in patched]


def build_patches(patched: tuple, release: str) -> dict:
    """patch jar -> its fix, built (or found in the cache) before the cluster starts."""
    from realkafka.cluster import HarnessError
    from realkafka.patches import patched_jar

    jars = {}
    for fix, _, _ in patched:
        try:
            jars[patched_jar(fix, release, log=lambda line: click.echo(f"jbodcheck: {line}", err=True))] = fix
        except HarnessError as e:
            raise (BadInput if e.bad_input else JbodcheckFailure)(f"--fix {fix}: {e}") from None
    return jars


def checked_patches(cluster, jars: dict, report: list[dict]) -> list[dict]:
    """The fixes' report with each patch jar and the nodes whose JVM loaded the patched class from it; a harness
    failure (exit 3) when a node loaded a patched class from elsewhere, or no node loaded it."""
    from realkafka.patches import SOURCES, check_loaded

    homes = [n.home for n in [cluster.controller, *cluster.brokers.values()] if n is not None]
    where, problems = check_loaded(homes, {jar: SOURCES[fix].class_name for jar, fix in jars.items()})
    if problems:
        raise JbodcheckFailure("the patched cluster did not run the patch: " + "; ".join(problems[:3]))
    by_fix = {fix: jar for jar, fix in jars.items()}
    return [{**entry, "jar": str(by_fix[entry["fix"]]), "loaded_by": sorted(set(where[entry["class"]]))}
            for entry in report]


def with_fixes(text: str, fixes: list[dict], run) -> str:
    """The verdict with a sentence per fix: the patch, where its class was loaded from, and whether the violation
    the run without the fix shows happened on the patched cluster."""
    if not fixes:
        return text
    real = run.real_shown()
    parts = []
    for f in fixes:
        gone = [c for c in f["without_fix"] if c not in real]
        kept = [c for c in f["without_fix"] if c in real]
        loaded = (f"its patched {f['class']} loaded from the patch jar by {', '.join(f['loaded_by'])}"
                  if f["loaded_by"] else "its patched class's loading not checked (the run did not end)")
        parts.append(f"With the fix {f['fix']} ({f['patch']}; {loaded}): "
                     + (f"the violation the model shows without it ({', '.join(f['without_fix'])}) "
                        + ("did not happen on the patched cluster" if not kept else
                           f"happened on the patched cluster ({', '.join(kept)})") if f["without_fix"] else
                        "the model shows no violation without it either"))
    return text + " " + ". ".join(parts) + "."
