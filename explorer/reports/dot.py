"""The explored state graph in Graphviz's DOT language (``explore --dot PATH``), with the counterexample's path
highlighted.

A graph is only readable, and only drawable, for small configurations: ``--dot`` needs ``--max-states N`` with
N at most ``DOT_LIMIT``. The graph comes from a BFS of its own that keeps every edge (the engines keep none): the
first N distinct states (up to dir symmetry when it is on, as the search counts them) within ``--max-depth``,
every transition between them, and the counterexample's states and steps even where the bound cut them off.
"""
from __future__ import annotations

from collections import deque

from model import Model

from explorer.catalog import preset_of
from model.spec.engine import fingerprint_of
from explorer.scenario import scenario_steps

DOT_LIMIT = 2000


def _q(text: str) -> str:
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def state_graph(model: Model, max_states: int, max_depth: int | None = None):
    """(nodes, edges): nodes maps a fingerprint to (index, depth, state); edges is a list of (fingerprint from,
    fingerprint to, action), one per transition between kept states."""
    fingerprint = fingerprint_of(model)
    init = model.init_states()[0]
    nodes = {fingerprint(init): (0, 0, init)}
    edges = []
    queue = deque([(init, 0)])
    while queue:
        state, depth = queue.popleft()
        if max_depth is not None and depth >= max_depth:
            continue
        here = fingerprint(state)
        for action, after in model.successors(state):
            fp = fingerprint(after)
            if fp not in nodes:
                if len(nodes) >= max_states:
                    continue
                nodes[fp] = (len(nodes), depth + 1, after)
                queue.append((after, depth + 1))
            edges.append((here, fp, action))
    return nodes, edges


def _tooltip(model: Model, state) -> str:
    from .render import show_value, state_dict

    s = state_dict(model, state)
    parts = []
    for b in s["brokers"]:
        dirs = "/".join(b.get("dirs", []))
        parts.append(f"b{b['broker']} {'up' if b.get('up', True) else 'down'} [{dirs}]")
    for p in s["controller"].get("partitions", []):
        if "leader" in p:
            parts.append(f"p{p['partition']} leader={p.get('leader')} isr={p.get('isr')}")
        else:       # KRaft mode: the partition's PartitionRegistration (model/kraft/render.py), or none
            parts.append(f"p{p['partition']} " + ", ".join(show_value(v) for k, v in p.items() if k != "partition"))
    return "; ".join(parts)


def dot_text(model: Model, result, max_states: int, max_depth: int | None = None) -> str:
    nodes, edges = state_graph(model, max_states, max_depth)
    fingerprint = fingerprint_of(model)
    path_edges: dict = {}
    bad = None
    if result is not None and result.violations:
        v = result.violations[0]
        prints = [fingerprint(s) for _, s in v.trace]
        steps = scenario_steps(model, [a for a, _ in v.trace[1:]])
        for i, (fp, (_, s)) in enumerate(zip(prints, v.trace)):
            if fp not in nodes:
                nodes[fp] = (len(nodes), i, s)
        for i, (a, b) in enumerate(zip(prints, prints[1:]), start=1):
            path_edges[(a, b)] = f"{i}: {steps[i - 1]}"
        bad = prints[-1]
    cfg = model.cfg
    title = (f"jbodcheck {preset_of(model) or 'custom'} model, variant {cfg.variant}: {len(nodes)} states "
             f"(first {max_states} found by BFS{'' if max_depth is None else f', depth <= {max_depth}'}), "
             f"{len(edges)} transitions")
    if bad is not None:
        title += f"; in red: the counterexample to {result.violations[0].invariant.id}"
    lines = ["digraph jbodcheck {", f"  label={_q(title)}; labelloc=t; fontname=Helvetica;",
             "  node [shape=circle, fontname=Helvetica, fontsize=10, width=0.3, style=filled, fillcolor=white];",
             "  edge [fontname=Helvetica, fontsize=9, color=gray60, arrowsize=0.5];"]
    on_path = {fp for pair in path_edges for fp in pair}
    for fp, (index, depth, state) in nodes.items():
        attrs = [f"label={_q(index)}", f"tooltip={_q(f'state {index}, depth {depth}: ' + _tooltip(model, state))}"]
        if index == 0:
            attrs.append("shape=doublecircle")
        if fp == bad:
            attrs += ["fillcolor=\"#c62828\"", "fontcolor=white", "color=\"#c62828\""]
        elif fp in on_path:
            attrs += ["fillcolor=\"#ffcdd2\"", "color=\"#c62828\"", "penwidth=2"]
        lines.append(f"  s{index} [{', '.join(attrs)}];")
    drawn = set()
    for a, b, action in edges:
        label = model.label(action)
        key = (a, b)
        if key in path_edges and key not in drawn:
            drawn.add(key)
            lines.append(f"  s{nodes[a][0]} -> s{nodes[b][0]} [label={_q(path_edges[key])}, tooltip={_q(label)}, "
                         f"color=\"#c62828\", fontcolor=\"#c62828\", penwidth=2.5];")
        else:
            lines.append(f"  s{nodes[a][0]} -> s{nodes[b][0]} [tooltip={_q(label)}];")
    for key, label in path_edges.items():      # steps the bounded graph did not reach
        if key not in drawn:
            lines.append(f"  s{nodes[key[0]][0]} -> s{nodes[key[1]][0]} [label={_q(label)}, color=\"#c62828\", "
                         f"fontcolor=\"#c62828\", penwidth=2.5];")
    lines.append("}")
    return "\n".join(lines) + "\n"
