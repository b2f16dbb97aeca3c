"""The page of one state on a path: the path (each step a link back to it), the state drawn as the HTML trace
page draws it (explorer/reports/html.py: the cluster, what the last step changed), every invariant's verdict on it, a
violation met on the way as that page shows one, and every rule's instances: enabled ones as links that take
the step, disabled ones with the guard's reason and the rule's reference. Everything is rendered here, every
text through ``html.escape``; the page works without its small script (which only reads a chosen file into the
"open" form). No network: inline CSS and JS, and a Content-Security-Policy that loads nothing.
"""
from __future__ import annotations

from urllib.parse import urlencode

from .. import __version__
from ..reports.html import CSS as TRACE_CSS, Changes, changes_table, cluster, esc
from ..reports.render import flatten, state_dict, show_value
from ..errors import failure_detail, is_failure
from .walk import Walker

CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
       "form-action 'self'; base-uri 'none'")


def path_url(steps, at: int | None = None, base: str = "/") -> str:
    """The URL of a path (``step`` repeated, in order) showing the state after step ``at`` (default: the last)."""
    query = [("step", s) for s in steps]
    if at is not None and at != len(steps):
        query.append(("at", str(at)))
    return base + ("?" + urlencode(query) if query else "")


def _model_line(walker: Walker, preset: str | None) -> str:
    c = walker.model.cfg
    return (f"{esc(preset or 'custom')} model, variant {esc(c.variant)}, {c.brokers} brokers \u00d7 {c.dirs} dirs, "
            f"{c.partitions} partition(s), RF {c.rf}")


def _header(walker: Walker, preset: str | None, steps=(), at: int = 0, save: bool = False) -> str:
    params = "".join(f"<tr><th>{esc(k)}</th><td>{esc(show_value(v))}</td></tr>"
                     for k, v in walker.model.cfg.as_dict().items())
    links = ['<a class="btn" id="restart" href="/">Initial state</a>']
    if save:
        links.append(f'<a class="btn" id="save" download="jbodcheck-path.json" '
                     f'href="{esc(path_url(steps[:at], base="/scenario.json"))}" title="the steps up to the state '
                     f'shown, as a scenario file for jbodcheck replay">Save path as scenario</a>')
    return (f'<section class="summary"><h1>jbodcheck serve</h1><p class="model">{_model_line(walker, preset)}</p>'
            f'<div class="controls">{"".join(links)}</div>'
            f'<details><summary>Model parameters</summary><table class="kv">{params}</table></details>'
            f'<details class="open"><summary>Open a scenario file, a --json report or a --save-scenario file</summary>'
            f'<form method="post" action="/open" id="open-form"><input type="file" id="open-file" accept=".json">'
            f'<input type="hidden" name="name" id="open-name" value="the pasted file">'
            f'<textarea name="text" id="open-text" rows="6" placeholder="or paste its JSON here"></textarea>'
            f'<button type="submit" id="open-submit">Open</button></form></details></section>')


def _broken(walker: Walker, found: list, steps, at: int) -> str:
    out = []
    for f in found:
        inv = f.invariant
        where = "the initial state" if f.step == 0 else f"step {f.step}: {steps[f.step - 1]}"
        if is_failure(f.message):       # a plugin's check raised: the checker failed, not the model
            out.append(f'<section class="violation failure" data-invariant="{esc(inv.id)}" data-step="{f.step}">'
                       f'<h2>The check of <code>{esc(inv.id)}</code> raised {esc(failure_detail(f.message))}</h2>'
                       f'<p>At <a href="{esc(path_url(steps, f.step))}">{esc(where)}</a>: no verdict there.</p>'
                       f'</section>')
            continue
        if f.step > at:                 # further on: one line, the state shown is before it
            out.append(f'<section class="violation ahead" data-invariant="{esc(inv.id)}" data-step="{f.step}">'
                       f'<p class="bad">\u26A0 Further on this path, <a href="{esc(path_url(steps, f.step))}">'
                       f'{esc(where)}</a> breaks <code>{esc(inv.id)}</code> ({esc(inv.kind)} invariant): '
                       f'{esc(f.message)}</p></section>')
            continue
        out.append(
            f'<section class="violation" data-invariant="{esc(inv.id)}" data-step="{f.step}">'
            f'<h2>Violation of <code>{esc(inv.id)}</code> ({esc(inv.kind)} invariant)</h2>'
            f'<p class="message">{esc(f.message)}</p>'
            f'<p class="statement">{esc(inv.statement)}</p><p class="ref">Reference: {esc(inv.reference)}</p>'
            f'<p>At <a href="{esc(path_url(steps, f.step))}">{esc(where)}</a>.</p></section>')
    return "".join(out)


def _path(walker: Walker, nodes, steps, at: int, found) -> str:
    bad = {f.step for f in found}
    rows = []
    for i, node in enumerate(nodes):
        label = "initial state" if node.action is None else walker.model.label(node.action)
        cls = ["row"] + (["current"] if i == at else []) + (["violating"] if i in bad else []) + \
            (["ahead"] if i > at else [])
        ref = "" if node.action is None else walker.model.rules[node.action.rule].reference
        rows.append(f'<li class="{" ".join(cls)}" data-step="{i}"><span class="n">{i}</span>'
                    f'<a class="act" href="{esc(path_url(steps, i))}">{esc(label)}</a>'
                    + (f'<span class="kip">{esc(ref)}</span>' if ref else "") + "</li>")
    hint = ("" if at == len(steps) else
            f'<p class="hint">Steps after {at} are ahead of the state shown: an action taken here forks the path.</p>')
    return f'<div class="pathbox"><h2>Path</h2><ol class="steps">{"".join(rows)}</ol>{hint}</div>'


def _state(walker: Walker, nodes, at: int, found) -> str:
    model = walker.model
    node = nodes[at]
    current = flatten(state_dict(model, node.state))
    before = None if at == 0 else flatten(state_dict(model, nodes[at - 1].state))
    table, keys = changes_table(before, current)
    label = "initial state" if node.action is None else model.label(node.action)
    ref = "" if node.action is None else model.rules[node.action.rule].reference
    here = [f for f in found if f.step == at]
    flat_rows = "".join(f"<tr><td><code>{esc(k)}</code></td><td>{esc(show_value(v))}</td></tr>"
                        for k, v in current.items())
    return (f'<article class="step{" violating" if here else ""}" id="state" data-step="{at}">'
            f'<h3>Step {at}: {esc(label)}</h3>'
            + (f'<p class="ref">Rule reference: {esc(ref)}</p>' if ref else "")
            + "".join(f'<p class="bad">\u26A0 {esc(f.invariant.id)} is violated here: {esc(f.message)}</p>'
                      for f in here)
            + f'<div class="changed"><h4>What changed</h4>{table}</div>'
            f'<div class="drawing">{cluster(state_dict(model, node.state), Changes(keys))}</div>'
            f'<details><summary>The whole state ({len(current)} fields)</summary>'
            f'<table class="flat">{flat_rows}</table></details></article>')


def _actions(walker: Walker, state, steps, at: int) -> tuple[str, str]:
    """The enabled actions (for the column beside the state) and the disabled rules (below it)."""
    base = list(steps[:at])
    enabled, disabled = [], []
    for rc in walker.choices(state):
        r = rc.rule
        head = (f'<div class="rulehead"><code>{esc(r.name)}({esc(", ".join(r.params))})</code> '
                f'<span class="kind">{esc(r.kind)}</span></div><div class="ref">{esc(r.reference)}</div>')
        off = "".join(f'<li data-step="{esc(c.step)}"><code>{esc(c.step)}</code>: {esc(c.reason)}</li>'
                      for c in rc.disabled)
        if rc.enabled:
            buttons = "".join(f'<a class="btn action" data-step="{esc(c.step)}" '
                              f'href="{esc(path_url(base + [c.step]))}">{esc(c.step)}</a>' for c in rc.enabled)
            more = (f'<details><summary>{len(rc.disabled)} disabled</summary><ul class="why">{off}</ul></details>'
                    if rc.disabled else "")
            enabled.append(f'<div class="rule on" data-rule="{esc(r.name)}">{head}<div class="acts">{buttons}</div>'
                           f'{more}</div>')
        else:
            disabled.append(f'<div class="rule off" data-rule="{esc(r.name)}">{head}<ul class="why">{off}</ul></div>')
    none = '<p class="muted">No action is enabled: the path ends here.</p>' if not enabled else ""
    return (f'<div class="actions" id="enabled"><h2>Enabled actions</h2>{none}{"".join(enabled)}</div>',
            f'<section class="actions" id="disabled"><h2>Disabled rules ({len(disabled)}), with the reason each '
            f'guard gives</h2><div class="rules">{"".join(disabled)}</div></section>')


def _verdicts(walker: Walker, nodes, at: int) -> str:
    rows = "".join(
        f'<tr class="{v.verdict.replace(" ", "-")}" data-invariant="{esc(v.invariant.id)}">'
        f'<td><code>{esc(v.invariant.id)}</code></td><td>{esc(v.invariant.kind)}</td>'
        f'<td class="verdict">{esc(v.verdict)}</td><td>{esc(v.message)}</td>'
        f'<td class="ref" title="{esc(v.invariant.reference)}">{esc(v.invariant.statement)}</td></tr>'
        for v in walker.verdicts(nodes, at))
    return (f'<section class="invariants"><h2>Invariants on this state</h2><table class="grid inv">'
            f'<tr><th>invariant</th><th>kind</th><th>verdict</th><th>why</th><th>statement</th></tr>{rows}'
            f'</table></section>')


CSS = TRACE_CSS + """
a.btn{display:inline-block;font:inherit;padding:3px 9px;border:1px solid #9aa3ad;border-radius:6px;background:#f3f5f7;
color:#111;text-decoration:none;margin:2px 4px 2px 0}a.btn:hover{background:#e3e8ee}
a.btn.action{background:#e3f0ff;border-color:#1565c0;font-family:ui-monospace,Menlo,monospace;font-size:12.5px}
.steps li a.act{color:inherit;text-decoration:none}.steps li.ahead{opacity:.6}
.pathbox h2{margin-top:0}#enabled .rule{margin-top:6px}#enabled h2{margin-top:14px}.rules{display:grid;grid-template-columns:repeat(auto-fill,minmax(330px,1fr));gap:8px}
.rule{border:1px solid var(--line);border-radius:6px;padding:6px 8px}.rule.off{background:#fafafa;color:#555}
.rulehead .kind{font-size:11px;color:#666;margin-left:6px}.why{margin:4px 0 0 16px;padding:0;font-size:12px}
.inv .holds .verdict{color:var(--good);font-weight:600}.inv .violated td{background:#fdecec}
.inv .violated .verdict{color:var(--off);font-weight:700}.inv .not-checked .verdict{color:#777}.inv .check-raised .verdict{color:#8a6d00;font-weight:700}
section.violation.ahead{border-color:#e0a100;padding:4px 16px}section.violation.ahead .bad{margin:4px 0}section.violation{border-color:var(--off)}
.error{color:var(--off);font-weight:600}#open-form{display:grid;gap:6px;margin-top:6px;max-width:760px}
#open-form textarea{font-family:ui-monospace,Menlo,monospace;font-size:12px}
"""

JS = r"""
(function(){
  var input=document.getElementById('open-file');
  if(input)input.addEventListener('change',function(){
    var f=input.files[0];if(!f)return;var r=new FileReader();
    r.onload=function(){document.getElementById('open-text').value=r.result;
      document.getElementById('open-name').value=f.name;};
    r.readAsText(f);});
  document.body.setAttribute('data-ready','1');
})();
"""


def document(title: str, body: str) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body>{body}"
            f'<p class="muted">jbodcheck {esc(__version__)} serve: the URL holds the path; the verdicts are on the '
            f'states shown, not a search.</p><script>{JS}</script></body></html>\n')


def state_page(walker: Walker, preset: str | None, steps: tuple, at: int) -> str:
    """The page of the state after step ``at`` of the path ``steps`` (PathError from the walker if it breaks)."""
    nodes = walker.nodes(steps)
    found = walker.broken(nodes)
    enabled, disabled = _actions(walker, nodes[at].state, steps, at)
    title = f"jbodcheck serve: step {at} of {len(steps)}"
    body = (_header(walker, preset, steps, at, save=True) + _broken(walker, found, steps, at)
            + f'<section><div class="layout"><div class="side">{_path(walker, nodes, steps, at, found)}{enabled}'
            f'</div><div class="panels">{_state(walker, nodes, at, found)}</div></div></section>'
            + _verdicts(walker, nodes, at) + disabled)
    return document(title, body)


def error_page(walker: Walker, preset: str | None, status: int, message: str, back: str | None = None) -> str:
    """A refused request: what is wrong, in one line, and where to go on."""
    link = f'<p><a class="btn" id="back" href="{esc(back)}">Back to the path before it</a></p>' if back else ""
    body = (_header(walker, preset) + f'<section class="refused"><h2>Bad request ({status})</h2>'
            f'<p class="error" id="error">{esc(message)}</p>{link}</section>')
    return document(f"jbodcheck serve: bad request ({status})", body)
