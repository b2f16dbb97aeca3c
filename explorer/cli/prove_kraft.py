"""`jbodcheck prove --variant kraft`: KRaft's controller properties for every cluster size (proofs/kraft_*.py,
docs/proofs.md "KRaft"), with the same report shape as KIP-112's induction."""
from __future__ import annotations

from .prove_report import induction_report

KRAFT_VARIANT = "kraft"


def unknown_properties(property_ids) -> list:
    from proofs.kraft_properties import PROPERTIES

    return [p for p in property_ids if p not in PROPERTIES]


def known_properties() -> str:
    from proofs.kraft_properties import PROPERTIES

    return ", ".join(PROPERTIES)


def run(property_ids, schema: int) -> tuple[list, dict, bool, str]:
    """(text lines, JSON report, every property proved, the verdict)."""
    from proofs import kraft_induction
    from proofs.kraft_conformance import Z3_RELEASE
    from proofs.kraft_properties import PROPERTIES

    ids = list(property_ids) or list(PROPERTIES)
    lines = [f"jbodcheck prove: variant {KRAFT_VARIANT} (kraft-core's controller image), any number of brokers, "
             f"dirs and partitions (z3 induction; brokers abstracted: docs/proofs.md, 'KRaft')",
             f"The z3 model follows Kafka {Z3_RELEASE}'s controller: it leaves out ELR (KIP-966, on by default from "
             f"4.1) and the records 4.0+ writes at a registration (handleBrokerShutdown); its conformance check runs "
             f"against the explicit model with --kafka {Z3_RELEASE} (docs/proofs.md, section 9)."]
    results = [kraft_induction.prove(pid) for pid in ids]
    vac = kraft_induction.vacuity()
    lines += [""] + kraft_induction.render_vacuity(vac)
    for r in results:
        lines += [""] + kraft_induction.render(r)
    report, ok, verdict = induction_report(schema, KRAFT_VARIANT, results, vac)
    report["kafka"] = {"release": Z3_RELEASE, "elr": False,
                       "left_out": "ELR (KIP-966) and the records 4.0+ writes at a registration"}
    return lines, report, ok, verdict
