"""A file opened in the page as a path to walk: a scenario file (also one that ``--save-scenario`` wrote) or a
``--json`` report, whose first counterexample is the path. The file is read as `jbodcheck replay` and
`jbodcheck view` read theirs (explorer/scenario.py, explorer/reports/html.py), so the same file is refused with the same
message; its model must be the served one.
"""
from __future__ import annotations

import json
import os
import tempfile

from model import ConfigError, ModelConfig
from model.zk.designs import canonical_variant

from ..catalog import preset_config
from ..scenario import MAX_SCENARIO_BYTES, ScenarioError, load_scenario

MAX_FILE_BYTES = 2 * MAX_SCENARIO_BYTES      # a report of a counterexample is far smaller


class FileError(ValueError):
    """A file that is not a scenario or report, or one of another model than the served one (a 4xx)."""


def steps_of(text: str, name: str, cfg: ModelConfig, extra_presets: dict | None = None) -> list[str]:
    """The steps of the file's path; FileError (one line, naming the file as ``name``) when there are none."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
        raise FileError(f"{name} is larger than {MAX_FILE_BYTES >> 20} MB: not a scenario or a report")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        data = None                          # the loaders below say what is wrong, as replay and view do
    is_report = isinstance(data, dict) and "tool" in data
    with tempfile.TemporaryDirectory(prefix="jbodcheck-serve-") as folder:
        path = os.path.join(folder, "upload.json")
        with open(path, "w", encoding="utf-8", errors="surrogatepass") as f:
            f.write(text)
        try:
            model, steps = _report(path) if is_report else _scenario(path)
        except (ScenarioError, ValueError) as e:
            raise FileError(str(e).replace(path, name)) from None
    check_model(model, cfg, name, extra_presets)
    return steps


def _scenario(path: str) -> tuple[dict, list[str]]:
    scenario = load_scenario(path)
    return dict(scenario.model), list(scenario.steps)


def _report(path: str) -> tuple[dict, list[str]]:
    from ..reports.html import load_report

    report = load_report(path)
    violations = report.get("violations")
    if not isinstance(violations, list) or not violations:
        raise ValueError(f"the report {path} has no counterexample to walk (result: {report.get('result')})")
    first = violations[0]
    trace = first.get("trace") if isinstance(first, dict) else None
    actions = [e.get("action") if isinstance(e, dict) else None for e in trace[1:]] if isinstance(trace, list) else [None]
    if not all(isinstance(a, str) for a in actions):
        raise ValueError(f"the report {path} is not one jbodcheck can walk: its first violation's trace is not a list "
                         f"of steps with actions")
    # A report's step is the action's label: the rule's step and the UpdateMetadata requests it settled.
    steps = [a.split(" + ", 1)[0] for a in actions]
    model = report.get("model")
    return (dict(model) if isinstance(model, dict) else {}), steps


def config_of(model: dict, extra_presets: dict | None = None) -> ModelConfig:
    """The configuration a file's ``model`` names (a preset and overrides, or every parameter)."""
    params = dict(model)
    preset = params.pop("preset", None)
    if preset is not None:
        return preset_config(preset, extra_presets, **params)
    return ModelConfig.from_dict(params)


def _canonical(cfg: ModelConfig) -> dict:
    out = cfg.as_dict()
    out["variant"] = canonical_variant(out["variant"])
    return out


def check_model(model: dict, cfg: ModelConfig, name: str, extra_presets: dict | None = None) -> None:
    """FileError unless the file's model is the served one (an old variant name counts as its new one)."""
    try:
        theirs = _canonical(config_of(model, extra_presets))
    except (ConfigError, TypeError, ValueError) as e:
        raise FileError(f"{name}: its model cannot be built: {' '.join(str(e).split())}") from None
    ours = _canonical(cfg)
    differ = [f"{k}={json.dumps(theirs.get(k))} (served: {json.dumps(ours.get(k))})"
              for k in sorted(set(ours) | set(theirs)) if theirs.get(k) != ours.get(k)]
    if differ:
        raise FileError(f"{name} is for another model than the one served: {'; '.join(differ)}; start "
                        f"`jbodcheck serve` with its model options to walk it")
