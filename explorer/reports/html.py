"""A run as one self-contained HTML page (``--html PATH``, ``jbodcheck view REPORT.json --html PATH``).

The page is built from the JSON report alone (explorer/reports/report.py ``report_dict``: the model, the coverage, the
violations with a readable ``state`` per step), plus the rules' and invariants' references (``references``),
which the report does not carry. Everything is rendered here, on the server side, every text through
``html.escape``; the page's small script only shows one step at a time (buttons, arrow keys, the URL fragment
``#step=N``) and reads nothing from the states. Without JavaScript every step is shown, one after the other.
No network: inline CSS and JS, and a Content-Security-Policy that forbids loading anything.
"""
from __future__ import annotations

import html

from explorer import __version__
from .render import APPENDED, changes, flatten, is_typed, show_value as text

DIR_CLASSES = ("good", "saturated", "offline", "removed")


def esc(value) -> str:
    return html.escape(str(value), quote=True)


# ---- references (not in the report) ---------------------------------------------------------------------------

def references(model) -> dict:
    """The rules' references and the invariants' statements and references of a model's design (also of the
    features this configuration leaves out) and its plugins: ``{"rules": {name: reference}, "invariants": {id:
    {"statement", "reference"}}}``."""
    from explorer.catalog import claims_of, features

    rules, invs = {}, {}
    for feature in (*features(), *getattr(model, "plugin_features", ()), *model.features):
        for r in feature.rules:
            rules[r.name] = r.reference
        for r in feature.replaces.values():
            rules.setdefault(r.name, r.reference)
        for i in claims_of(feature):
            invs[i.id] = {"statement": i.statement, "reference": i.reference}
    for r in model.rules:                       # the design's own rule wins (a variant replaces a rule)
        rules[r.name] = r.reference
    for i in model.all_invariants:
        invs[i.id] = {"statement": i.statement, "reference": i.reference}
    return {"rules": rules, "invariants": invs}


def rule_name(label: str | None) -> str | None:
    if not label:
        return None
    return label.split("(", 1)[0].strip()


# ---- values ---------------------------------------------------------------------------------------------------

class Changes:
    """The flat keys that changed into a step, and a test for a key and everything below it."""

    def __init__(self, keys):
        self.keys = set(keys)

    def under(self, prefix: str) -> bool:
        return any(k == prefix or k.startswith(prefix + ".") or k.startswith(prefix + "[") for k in self.keys)

    def cls(self, prefix: str) -> str:
        return " chg" if self.under(prefix) else ""


# ---- the cluster, drawn ---------------------------------------------------------------------------------------

def _list(items, empty: str = "none") -> str:
    if not items:
        return f'<span class="muted">{esc(empty)}</span>'
    return "<ol class=\"msgs\">" + "".join(f"<li>{esc(m)}</li>" for m in items) + "</ol>"


def _cell(value) -> str:
    if is_typed(value):
        return esc(text(value))
    if isinstance(value, dict) and value and all(not isinstance(v, dict) or is_typed(v) for v in value.values()):
        return "<br>".join(f"{esc(k)}: {esc(text(v))}" for k, v in value.items())
    return esc(text(value))


def _table(rows: list[dict], prefix: str, changes: Changes, skip=("partition",), key="partition",
           head: str = "p") -> str:
    if not rows:
        return ""
    columns = [c for c in rows[0] if c not in skip]
    out = ['<table class="grid"><tr>', f"<th>{esc(head)}</th>"]
    out += [f"<th>{esc(c.replace('_', ' '))}</th>" for c in columns]
    out.append("</tr>")
    for i, row in enumerate(rows):
        base = f"{prefix}[{i}]"
        out.append(f'<tr><td class="rowhead">{esc(row.get(key, i))}</td>')
        for c in columns:
            out.append(f'<td class="{changes.cls(f"{base}.{c}").strip()}">{_cell(row.get(c))}</td>')
        out.append("</tr>")
    out.append("</table>")
    return "".join(out)


def _kv(data: dict, prefix: str, changes: Changes, skip=()) -> str:
    rows = []
    for k, v in data.items():
        if k in skip:
            continue
        key = f"{prefix}.{k}" if prefix else k
        if isinstance(v, list) and v and all(is_typed(x) for x in v):
            body = _list([text(x) for x in v])
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            body = _table(v, key, changes, skip=(), key="", head="#")
        else:
            body = _cell(v)
        rows.append(f'<tr class="{changes.cls(key).strip()}"><th>{esc(k.replace("_", " "))}</th><td>{body}</td></tr>')
    return f'<table class="kv">{"".join(rows)}</table>' if rows else ""


BROKER_DRAWN = ("broker", "up", "dirs", "partitions", "inbox", "responses")
PARTITION_DRAWN = ("partition", "log_on_dirs", "hosted")


def _broker(b: dict, changes: Changes) -> str:
    n = b.get("broker")
    prefix = f"brokers[{n}]"
    up = b.get("up", True)
    parts = b.get("partitions") or []
    out = [f'<div class="broker{"" if up else " down"}" data-broker="{esc(n)}">',
           f'<h4>Broker {esc(n)} <span class="badge {"up" if up else "downb"}{changes.cls(prefix + ".up")}">'
           f'{"up" if up else "down"}</span></h4>', f'<div class="dirs{changes.cls(prefix + ".dirs")}">']
    for d, state in enumerate(b.get("dirs") or []):
        cls = state if state in DIR_CLASSES else "other"
        chips = []
        for p in parts:
            if d in (p.get("log_on_dirs") or []):
                hosted = p.get("hosted", "none")
                role = _role(hosted)
                mark = " \u2605" if role == "leader" else ""
                chg = changes.cls(f"{prefix}.partitions[{p.get('partition')}].log_on_dirs").strip() or \
                    changes.cls(f"{prefix}.partitions[{p.get('partition')}].hosted").strip()
                chips.append(f'<span class="rep {role} {chg}" title="partition {esc(p.get("partition"))}: '
                             f'{esc(hosted)}">p{esc(p.get("partition"))}{mark}</span>')
        out.append(f'<div class="dir {cls}"><div class="dirname">dir {d}<span class="dstate">{esc(state)}</span></div>'
                   f'<div class="reps">{"".join(chips) or "<span class=muted>empty</span>"}</div></div>')
    out.append("</div>")
    if parts:
        rows = []
        for p in parts:
            row = {"partition": p.get("partition"), "hosted": p.get("hosted"),
                   "on dirs": p.get("log_on_dirs"), **{k: v for k, v in p.items() if k not in PARTITION_DRAWN}}
            rows.append(row)
        # the table's cells use the state's own keys (so that changes are found), "on dirs" is log_on_dirs
        out.append(_partition_table(rows, prefix + ".partitions", changes))
    out.append(f'<div class="inflight"><div class="{changes.cls(prefix + ".inbox").strip()}"><b>inbox</b> '
               f'{_list(b.get("inbox", []), "empty")}</div>'
               f'<div class="{changes.cls(prefix + ".responses").strip()}"><b>responses</b> '
               f'{_list(b.get("responses", []), "none")}</div></div>')
    extra = {k: v for k, v in b.items() if k not in BROKER_DRAWN}
    if extra:
        out.append(_kv(extra, prefix, changes))
    out.append("</div>")
    return "".join(out)


def _role(hosted) -> str:
    """A replica's chip class by its hosted state: ZooKeeper mode's words, or KRaft's HostedPartition names."""
    hosted = str(hosted)
    for word, role in (("leader", "leader"), ("follower", "follower"), ("offline", "offl")):
        if hosted == word or hosted.startswith("HostedPartition.") and word in hosted.lower():
            return role
    return "none"


def _partition_table(rows, prefix, changes) -> str:
    """A broker's partitions: one line each, its fields as small labelled chips that wrap."""
    out = ['<div class="bparts">']
    for row in rows:
        base = f"{prefix}[{row['partition']}]"
        chips = []
        for c, value in row.items():
            if c == "partition":
                continue
            key = "log_on_dirs" if c == "on dirs" else c
            if c == "metadata" and isinstance(value, dict):
                shown = (f"leader {esc(text(value.get('leader')))} \u00b7 isr {esc(text(value.get('isr')))} \u00b7 "
                         f"offline {esc(text(value.get('offline_replicas')))}")
            else:
                shown = _cell(value)
            chips.append(f'<span class="kvc{changes.cls(f"{base}.{key}")}"><i>{esc(c.replace("_", " "))}</i> '
                         f'{shown}</span>')
        out.append(f'<div class="bpart"><span class="pname">p{esc(row["partition"])}</span>{"".join(chips)}</div>')
    out.append("</div>")
    return "".join(out)


def _controller(c: dict, changes: Changes) -> str:
    out = ['<div class="controller"><h4>Controller</h4>',
           _kv({k: v for k, v in c.items() if k != "partitions"}, "controller", changes)]
    parts = c.get("partitions", [])
    if parts:
        out.append(_table(parts, "controller.partitions", changes))
    out.append("</div>")
    return "".join(out)


def cluster(state: dict, changes: Changes) -> str:
    """The cluster of one step: brokers with their dirs and replicas, partitions, messages in flight; the
    controller; what else the state holds."""
    out = ['<div class="cluster"><div class="brokers">']
    out += [_broker(b, changes) for b in state.get("brokers", [])]
    out.append("</div>")
    if "controller" in state:
        out.append(_controller(state["controller"], changes))
    rest = {k: v for k, v in state.items() if k not in ("brokers", "controller")}
    if rest:
        out.append('<div class="other"><h4>Elsewhere</h4>' + _kv(rest, "", changes) + "</div>")
    out.append("</div>")
    return "".join(out)


# ---- the page -------------------------------------------------------------------------------------------------

def changes_table(before: dict | None, after: dict) -> tuple[str, list[str]]:
    if before is None:
        return '<p class="muted">The initial state.</p>', []
    found = [c for k in after if after[k] != before.get(k) for c in changes(k, before.get(k), after[k])]
    found += [(k, before[k], None) for k in before if k not in after]
    if not found:
        return '<p class="muted">Nothing changed.</p>', []
    rows = "".join(f"<tr><td><code>{esc(k)}</code></td><td class=\"old\">{esc(_before(old))}</td>"
                   f"<td class=\"new\">{esc(_after(old, new))}</td></tr>" for k, old, new in found)
    return (f'<table class="changes"><tr><th>field</th><th>before</th><th>after</th></tr>{rows}</table>',
            [k for k, _, _ in found])


def _before(old) -> str:
    return "(the entries before, unchanged)" if old is APPENDED else text(old)


def _after(old, new) -> str:
    return f"+ {text(new)}" if old is APPENDED else text(new)


def _violation(index: int, v: dict, refs: dict) -> str:
    inv = refs.get("invariants", {}).get(v.get("invariant"), {})
    trace = v.get("trace", [])
    last = len(trace) - 1
    walkthrough = v.get("invariant") is None         # a replayed scenario without a violation: its steps
    loop_start = v.get("loop_start")                  # a lasso (explore --liveness): its cycle starts here
    out = [f'<section class="violation" id="v{index}" data-violation="{index}" data-steps="{len(trace)}">']
    if walkthrough:
        out.append(f'<h2>{esc(v.get("title") or "The replayed steps")}</h2>')
        if v.get("description"):
            out.append(f'<p class="statement">{esc(v["description"])}</p>')
    else:
        what = "property: a lasso" if loop_start is not None else "invariant"
        out += [f'<h2>Violation of <code>{esc(v.get("invariant"))}</code> ({esc(v.get("kind"))} {what})</h2>',
                f'<p class="message">{esc(v.get("message"))}</p>']
    if inv.get("statement"):
        out.append(f'<p class="statement">{esc(inv["statement"])}</p>')
    if inv.get("reference"):
        out.append(f'<p class="ref">Reference: {esc(inv["reference"])}</p>')
    out.append(f'<div class="controls"><button type="button" data-go="first" title="first step (Home)">&#x00AB; First'
               f'</button><button type="button" data-go="prev" title="previous step (\u2190)">&#x25C0; Back</button>'
               f'<span class="pos">Step <b class="cur">0</b> of {last}</span>'
               f'<button type="button" data-go="next" title="next step (\u2192)">Forward &#x25B6;</button>'
               f'<button type="button" data-go="last" title="last step (End)">Last &#x00BB;</button>'
               f'<label class="all"><input type="checkbox" class="showall"> every step at once</label>'
               f'<span class="hint">keys: \u2190 \u2192 Home End</span></div>')
    rows, panels = [], []
    previous = None
    for i, entry in enumerate(trace):
        action = entry.get("action")
        state = entry.get("state") or {}
        current = flatten(state)
        table, keys = changes_table(previous, current)
        changes = Changes(keys)
        ref = refs.get("rules", {}).get(rule_name(action) or "", "")
        label = "initial state" if action is None else action
        cls = " violating" if i == last and not walkthrough else ""
        if loop_start is not None and loop_start <= i:
            cls += " loop"
        mark = _loop_mark(i, last, loop_start)
        rows.append(f'<li class="row{cls}" data-step="{i}"><span class="n">{i}</span>'
                    f'<span class="act">{esc(label)}</span>'
                    + (f'<span class="cycle">{esc(mark)}</span>' if mark else "")
                    + (f'<span class="kip">{esc(ref)}</span>' if ref else "")
                    + f'<span class="nchg">{len(keys)} change{"" if len(keys) == 1 else "s"}</span></li>')
        flat_rows = "".join(f"<tr><td><code>{esc(k)}</code></td><td>{esc(text(val))}</td></tr>"
                            for k, val in current.items())
        panels.append(
            f'<article class="step{cls}" data-step="{i}" id="v{index}-step-{i}">'
            f'<h3>Step {i}: {esc(label)}</h3>'
            + (f'<p class="ref">Rule reference: {esc(ref)}</p>' if ref else "")
            + (f'<p class="cycle">\u21BB {esc(mark)}</p>' if mark else "")
            + (f'<p class="bad">\u26A0 {esc(v.get("invariant"))} is violated '
               f'{"by this behaviour" if loop_start is not None else "here"}: {esc(v.get("message"))}</p>'
               if i == last and not walkthrough else "")
            + f'<div class="changed"><h4>What changed</h4>{table}</div>'
            f'<div class="drawing">{cluster(state, changes)}</div>'
            f'<details><summary>The whole state ({len(current)} fields)</summary>'
            f'<table class="flat">{flat_rows}</table></details></article>')
        previous = current
    out.append(f'<div class="layout"><ol class="steps">{"".join(rows)}</ol>'
               f'<div class="panels">{"".join(panels)}</div></div></section>')
    return "".join(out)


def _loop_mark(i: int, last: int, loop_start: int | None) -> str:
    """What a lasso's step says about its cycle (explorer/liveness.py): where it starts, where it closes."""
    if loop_start is None:
        return ""
    if loop_start == last == i:
        return "the system stays in this state forever: no fair step is enabled"
    if i == loop_start:
        return f"the cycle starts here: steps {loop_start + 1} to {last} repeat forever"
    if i == last:
        return f"the cycle closes here: back in the state of step {loop_start}"
    return ""


def _summary(report: dict) -> str:
    m = report.get("model", {}) or {}
    preset = m.get("preset") or "custom"
    line = (f"{esc(preset)} model, variant {esc(m.get('variant'))}, {esc(m.get('brokers'))} brokers \u00d7 "
            f"{esc(m.get('dirs'))} dirs, {esc(m.get('partitions'))} partition(s), RF {esc(m.get('rf'))}")
    result = report.get("result", "")
    facts = [("result", result), ("engine", report.get("engine")), ("distinct states", _num(report.get("distinct_states"))),
             ("generated", _num(report.get("states_generated"))), ("depth", report.get("depth")),
             ("elapsed", f"{report.get('elapsed_s', 0)} s"), ("workers", report.get("workers")),
             ("symmetry", "on" if report.get("symmetry") else ("off" + (f": {report['symmetry_note']}"
                                                                        if report.get("symmetry_note") else ""))),
             ("fingerprint collision chance", report.get("collision_probability"))]
    for key in ("expectations_failed", "hypothesis", "signal"):
        if report.get(key):
            facts.append((key.replace("_", " "), text(report[key])))
    rows = "".join(f'<span class="fact"><b>{esc(k)}</b> {esc(v)}</span>' for k, v in facts if v is not None)
    params = "".join(f"<tr><th>{esc(k)}</th><td>{esc(text(v))}</td></tr>" for k, v in m.items())
    return (f'<section class="summary"><h1>jbodcheck: <span class="result {esc(result)}">{esc(result)}</span></h1>'
            f'<p class="model">{line}</p><div class="facts">{rows}</div>'
            f'<details><summary>Model parameters</summary><table class="kv">{params}</table></details></section>')


def _num(n):
    return f"{n:,}" if isinstance(n, int) else n


def _coverage(report: dict, refs: dict) -> str:
    absent = set(report.get("rules_not_in_configuration") or [])
    rows = []
    for name, n in (report.get("coverage") or {}).items():
        cls = "absent" if name in absent else ("zero" if not n else "")
        note = " (not in this configuration)" if name in absent else ""
        rows.append(f'<tr class="{cls}"><td><code>{esc(name)}</code>{esc(note)}</td><td class="num">{esc(_num(n))}'
                    f'</td><td class="ref">{esc(refs.get("rules", {}).get(name, ""))}</td></tr>')
    return ('<section class="coverage"><h2>Coverage (transitions per rule)</h2><table class="grid cov">'
            '<tr><th>rule</th><th>firings</th><th>reference</th></tr>' + "".join(rows) + "</table></section>")


CSS = """
:root{--good:#2e7d32;--sat:#e0a100;--off:#c62828;--rem:#757575;--chg:#fff176;--ink:#1b1b1b;--line:#d0d4da}
*{box-sizing:border-box}body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);
margin:0;padding:16px 20px;background:#f6f7f9}h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:18px 0 6px}
h3{font-size:16px;margin:0 0 6px}h4{margin:0 0 6px;font-size:14px}code{font-family:ui-monospace,Menlo,Consolas,monospace;
font-size:12.5px}section{background:#fff;border:1px solid var(--line);border-radius:8px;padding:12px 16px;margin-bottom:14px}
.result{padding:1px 8px;border-radius:6px;color:#fff;background:#555}.result.violation{background:var(--off)}
.result.ok{background:var(--good)}.result.bounded{background:#1565c0}.model{margin:0 0 8px;color:#333}
table{border-collapse:collapse}.kv th{text-align:left;font-weight:600;padding:1px 10px 1px 0;vertical-align:top;white-space:nowrap}
.kv td{padding:1px 6px 1px 0}.grid th,.grid td{border:1px solid var(--line);padding:2px 6px;vertical-align:top}
.grid th{background:#eef0f3;font-weight:600}.cov .zero td{color:#b00}.cov .absent td{color:#999}.num{text-align:right}
.ref{color:#555;font-size:12.5px}.message{font-weight:600;color:var(--off);margin:4px 0}.statement{margin:4px 0}
.controls{display:flex;gap:8px;align-items:center;flex-wrap:wrap;margin:10px 0;position:sticky;top:0;background:#fff;
padding:6px 0;z-index:2}button{font:inherit;padding:4px 10px;border:1px solid #9aa3ad;border-radius:6px;background:#f3f5f7;
cursor:pointer}button:hover{background:#e3e8ee}.pos{font-weight:600;min-width:110px;text-align:center}.hint{color:#777;font-size:12px}
.layout{display:grid;grid-template-columns:minmax(230px,330px) 1fr;gap:14px;align-items:start}
.steps{list-style:none;margin:0;padding:0;max-height:78vh;overflow:auto;border:1px solid var(--line);border-radius:6px;
position:relative}.steps li{display:grid;grid-template-columns:28px 1fr;gap:0 6px;padding:5px 6px;border-bottom:1px solid #eceef1;
cursor:pointer}.steps li:hover{background:#f0f4fa}.steps li.current{background:#dbe9ff;box-shadow:inset 3px 0 0 #1565c0}
.steps li.violating .n{background:var(--off);color:#fff}.steps .n{grid-row:span 3;font-weight:700;text-align:center;
border-radius:4px;background:#e6e9ed;height:20px}.steps .act{font-family:ui-monospace,Menlo,monospace;font-size:12px;word-break:break-word}
.steps .kip{font-size:11px;color:#666}.steps .nchg{font-size:11px;color:#8a6d00}
article.step{border:1px solid var(--line);border-radius:8px;padding:10px 12px;margin-bottom:12px;background:#fff}
article.step.violating{border-color:var(--off)}.steps li.loop{border-left:3px solid #1565c0}
.cycle{color:#1565c0;font-size:12px;font-weight:600}.bad{color:var(--off);font-weight:600;margin:2px 0 8px}
.bpart{display:flex;flex-wrap:wrap;gap:3px 4px;align-items:baseline;padding:3px 0;border-top:1px solid #e3e6ea;font-size:12.5px}.pname{font-weight:700;margin-right:4px}.kvc{background:#eef1f4;border-radius:4px;padding:0 5px;white-space:nowrap}.kvc i{color:#666;font-style:normal;font-size:11px;margin-right:2px}.changed{max-height:170px;overflow:auto;margin-bottom:10px}.facts{display:flex;flex-wrap:wrap;gap:4px 18px}.fact b{font-weight:600;color:#444;margin-right:4px}.grid{font-size:12.5px}
.brokers{display:flex;flex-wrap:wrap;gap:10px}.broker{border:1px solid #aab2bd;border-radius:8px;padding:8px;background:#fbfcfd;
min-width:300px;flex:1 1 300px;overflow-x:auto}.broker.down{background:#eee;opacity:.75;border-style:dashed}.badge{font-size:11px;padding:0 6px;
border-radius:8px;color:#fff;background:var(--good)}.badge.downb{background:#555}
.dirs{display:flex;gap:6px;margin-bottom:6px;padding:2px;border-radius:6px}.dir{flex:1;border-radius:6px;padding:4px 6px;color:#fff;min-height:52px}
.dir.good{background:var(--good)}.dir.saturated{background:var(--sat);color:#222}.dir.offline{background:var(--off)}
.dir.removed{background:var(--rem)}.dir.other{background:#455a64}.dirname{font-size:12px;font-weight:600;display:flex;justify-content:space-between;gap:6px}
.dstate{text-transform:uppercase;font-size:10.5px;letter-spacing:.04em}.reps{margin-top:4px;display:flex;gap:4px;flex-wrap:wrap}
.rep{background:#fff;color:#222;border-radius:10px;padding:0 7px;font-size:12px;font-weight:600;border:2px solid transparent}
.rep.leader{border-color:#1565c0}.rep.offl{background:#ffd6d6}.muted{color:#888;font-style:italic;font-size:12px}
.dir .muted{color:#eef}.inflight{display:grid;grid-template-columns:1fr;gap:2px;margin-top:6px;font-size:12px}
ol.msgs{margin:2px 0 2px 18px;padding:0;font-family:ui-monospace,Menlo,monospace;font-size:11.5px}
.controller,.other{margin-top:10px;border:1px solid #aab2bd;border-radius:8px;padding:8px;background:#fbfcfd}
.chg,td.chg,tr.chg>td,tr.chg>th{background:var(--chg)!important;color:#111}.dirs.chg{outline:3px solid #f9a825}
.rep.chg{outline:3px solid #f9a825}.badge.chg{outline:3px solid #f9a825;color:#111}
.changes{font-size:12.5px;width:100%}.changes td:first-child{width:40%}.changes td,.changes th{border:1px solid var(--line);padding:2px 5px;vertical-align:top;word-break:break-word}
.changes .old{color:#7a1f1f;background:#fdecec}.changes .new{color:#174d1a;background:#e8f5e9}
.flat td{border-bottom:1px solid #eee;padding:1px 8px 1px 0;font-size:12px}details{margin-top:8px}
@media (max-width:1000px){.layout{grid-template-columns:1fr}.steps{max-height:30vh}}
@media print{.controls,.steps{display:none}.layout{display:block}article.step{break-inside:avoid}}
"""

JS = r"""
(function(){
  var sections=[].slice.call(document.querySelectorAll('section.violation'));
  var active=sections[0]||null;
  function api(sec){
    var panels=[].slice.call(sec.querySelectorAll('article.step'));
    var rows=[].slice.call(sec.querySelectorAll('ol.steps li'));
    var list=sec.querySelector('ol.steps');
    var all=sec.querySelector('input.showall');
    function show(n){
      n=Math.max(0,Math.min(panels.length-1,n));
      sec.dataset.current=String(n);
      panels.forEach(function(p,i){p.hidden=!all.checked&&i!==n;});
      rows.forEach(function(r,i){r.classList.toggle('current',i===n);});
      sec.querySelector('.pos .cur').textContent=String(n);
      var r=rows[n];
      if(r&&(r.offsetTop<list.scrollTop||r.offsetTop+r.offsetHeight>list.scrollTop+list.clientHeight)){
        list.scrollTop=Math.max(0,r.offsetTop-list.clientHeight/2);}
      if(all.checked&&panels[n]&&panels[n].scrollIntoView){panels[n].scrollIntoView({block:'start'});}
    }
    function cur(){return parseInt(sec.dataset.current||'0',10);}
    var go={first:function(){show(0);},prev:function(){show(cur()-1);},next:function(){show(cur()+1);},
            last:function(){show(panels.length-1);}};
    [].slice.call(sec.querySelectorAll('button[data-go]')).forEach(function(b){
      b.addEventListener('click',function(){active=sec;go[b.getAttribute('data-go')]();});});
    rows.forEach(function(r,i){r.addEventListener('click',function(){active=sec;show(i);});});
    all.addEventListener('change',function(){show(cur());});
    sec.addEventListener('mousedown',function(){active=sec;});
    sec.jb={show:show,go:go};
    show(0);
  }
  sections.forEach(api);
  document.addEventListener('keydown',function(e){
    if(!active||e.altKey||e.ctrlKey||e.metaKey)return;
    var t=e.target&&e.target.tagName;if(t==='INPUT'||t==='TEXTAREA')return;
    var k={ArrowRight:'next',ArrowDown:'next',ArrowLeft:'prev',ArrowUp:'prev',Home:'first',End:'last'}[e.key];
    if(k){e.preventDefault();active.jb.go[k]();}
  });
  // The URL fragment: #step=N (first violation), #v=I&step=N, and for tests press=ArrowRight,ArrowLeft,...
  // (keydown events) and click=next,prev,... (the buttons of the selected violation).
  var q={};location.hash.replace(/^#/,'').split('&').forEach(function(kv){var p=kv.split('=');
    if(p[0])q[decodeURIComponent(p[0])]=decodeURIComponent(p[1]||'');});
  if(q.v&&sections[+q.v])active=sections[+q.v];
  if(active&&q.step!==undefined)active.jb.show(parseInt(q.step,10)||0);
  if(active&&q.press)q.press.split(',').forEach(function(key){
    document.dispatchEvent(new KeyboardEvent('keydown',{key:key,bubbles:true}));});
  if(active&&q.click)q.click.split(',').forEach(function(b){
    var el=active.querySelector('button[data-go="'+b.replace(/[^a-z]/g,'')+'"]');if(el)el.click();});
  document.body.setAttribute('data-ready','1');
})();
"""


def page(report: dict, refs: dict | None = None, title: str | None = None, walkthrough: dict | None = None) -> str:
    """The whole page of a report (explorer/reports/report.py report_dict). ``walkthrough``: steps to show when there is
    no violation (replay: ``{"title", "trace": [{"step", "action", "state"}]}``)."""
    refs = refs or {}
    violations = report.get("violations") or []
    if not violations and walkthrough and walkthrough.get("trace"):
        violations = [{"invariant": None, **walkthrough}]
    first = violations[0].get("invariant") if violations else None
    if first is None and violations:
        title = title or f"jbodcheck: {violations[0].get('title', 'replay')}"
    title = title or (f"jbodcheck: violation of {first}" if first else f"jbodcheck: {report.get('result', '')}")
    body = [_summary(report)]
    if violations:
        body += [_violation(i, v, refs) for i, v in enumerate(violations)]
    else:
        body.append('<section><p>No violation: nothing to step through.</p></section>')
    body.append(_coverage(report, refs))
    body.append(f'<p class="muted">Written by jbodcheck {esc(report.get("version", __version__))}; '
                f'self-contained: no network.</p>')
    csp = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
            + "".join(body) + f"<script>{JS}</script></body></html>\n")


def load_report(path: str) -> dict:
    """A saved JSON report (``jbodcheck view``); ValueError (one line) when it is not one."""
    from .report_shape import ShapeError, check_report
    from explorer.scenario import MAX_SCENARIO_BYTES
    from model.spec.jsonfile import read_json

    data = read_json(path, "report", 64 * MAX_SCENARIO_BYTES)
    if not isinstance(data, dict) or data.get("tool") != "jbodcheck":
        raise ValueError(f"{path} is not a jbodcheck JSON report (written by --json)")
    try:
        check_report(data)
    except ShapeError as e:
        raise ValueError(f"{path} is not a report jbodcheck can show: {e}") from None
    return data
