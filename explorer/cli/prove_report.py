"""The JSON report and the one-line verdict of a `jbodcheck prove` induction run, KIP-112's or KRaft's."""
from __future__ import annotations


def induction_report(schema: int, variant: str, results: list, vac: dict) -> tuple[dict, bool, str]:
    """(the report, every property proved and no action vacuous, the verdict)."""
    ok = all(r["result"] == "proved" for r in results) and not vac["never_enabled"]
    report = {"schema": schema, "tool": "jbodcheck", "command": "prove", "mode": "induction",
              "variant": variant, "result": "proved" if ok else "not proved", "properties": results,
              "vacuity": vac}
    failed = [r["id"] for r in results if r["result"] != "proved"]
    failed += [f"action {name} never enabled (vacuous)" for name in vac["never_enabled"]]
    return report, ok, "all proved" if ok else "NOT proved: " + ", ".join(failed)


def with_conformance(report: dict, ok: bool, verdict: str, conformance: dict, conforms: bool):
    """The report, exit status and verdict once the conformance check (explorer/cli/prove_conformance.py) is in:
    a proof is about the explicit model only if it conforms to the z3 model, so a verdict never says proved
    (or no violation) without saying whether it does. (report, ok, verdict)"""
    report["conformance"] = conformance
    if not conformance["checked"]:
        verdict += ("; for the z3 model only: its conformance to the explicit model was not checked "
                    f"({conformance['why']})")
        return report, ok, verdict
    where = _where(conformance)
    broken = sorted({pid for c in conformance["configurations"] for pid in c.get("explicit_violations", {})})
    if broken:      # the explicit model itself breaks a property: said whatever the z3 model's verdict
        where += "; the explicit model itself breaks " + ", ".join(broken)
    scope = conformance.get("scope")     # KRaft: what the runs covered, and what none covers
    if scope:
        where = f"at {scope['checked']}: {where}"
    if conforms:
        verdict = f"{verdict}; the explicit model conforms to the z3 model ({where})"
        if scope:
            verdict += f"; NOT covered by that check: {', '.join(scope['not_covered'])}"
        return report, ok, verdict
    offences = sorted({_offence_name(o) for o in conformance["offences"]})
    what = ", ".join(offences[:4]) + (", ..." if len(offences) > 4 else "")
    if ok:
        report["result"] = "does not conform"
        verdict = (f"NOT established for this model: {verdict} for the z3 model, but the explicit model does NOT "
                   f"conform to it ({what}; {where}): the proof does not apply to the explicit model")
    else:
        verdict += f"; and the explicit model does NOT conform to the z3 model ({what}; {where})"
    return report, False, verdict


def _where(conformance: dict) -> str:
    parts = []
    for c in conformance["configurations"]:
        whole = c.get("whole", c.get("max_states") is None)
        name = c.get("name") or c.get("preset")
        parts.append(f"{name}: {c['states']:,} states" + ("" if whole else ", NOT all"))
    return "; ".join(parts)


def _offence_name(o: dict) -> str:
    check = o["check"]
    if check in ("property", "beyond"):
        return f"{check} {o['property']}"
    if check == "forward":
        return f"forward {o.get('transition') or o.get('rule')}".split("(")[0]
    if check == "initial":
        return "initial state"
    return f"{check} {o.get('action')}"
