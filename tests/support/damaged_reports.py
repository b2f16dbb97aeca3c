"""Reports with one field replaced (any JSON value): what `jbodcheck view` must refuse in one line or render."""
from __future__ import annotations


def damaged(report: dict, where: str, value) -> dict:
    """The report with the value at ``where`` (dotted, [i] for list items; a dotted ``.0`` is an object's key)
    replaced."""
    import copy
    import re

    data = copy.deepcopy(report)
    parts = [int(index) if index else name for index, name in re.findall(r"\[(\d+)\]|([^.\[\]]+)", where)]
    target = data
    for p in parts[:-1]:
        target = target[p]
    target[parts[-1]] = value
    return data


def json_values():
    """Any JSON value, small: scalars, lists and objects nested a few levels."""
    from hypothesis import strategies as st

    scalars = st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False) | st.text(max_size=4)
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                        | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=6)


def paths(value, prefix="") -> list[str]:
    """Every field of ``value``, dotted, [i] for the first three items of a list."""
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            out += paths(v, f"{prefix}.{k}" if prefix else k)
    elif isinstance(value, list):
        for i, v in enumerate(value[:3]):
            out += paths(v, f"{prefix}[{i}]")
    return out


def renders_or_refuses(report: dict, paths: list[str]) -> None:
    """For 300 examples (derandomized): the value at one of ``paths`` replaced by any JSON value, the shape check
    refuses the report or the page renders it (tests/cli/test_hostile_input.py on a ZooKeeper-mode report, tests/kraft/test_kraft_render.py on a KRaft one)."""
    from hypothesis import given, settings, strategies as st

    from explorer.reports.html import page
    from explorer.reports.report_shape import ShapeError, check_report

    @settings(max_examples=300, deadline=None, database=None, derandomize=True)
    @given(st.sampled_from(paths), json_values())
    def one(where, value):
        data = damaged(report, where, value)
        try:
            check_report(data)
        except ShapeError:
            return
        page(data, {})

    one()
