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
