"""Conformance campaigns (docs/conform.md): traces generated from the model's own rules (generate.py), each driven on
a fresh real cluster by the reproduce driver and judged by trace validation (realkafka/driver/validate.py), with
per-rule agreement counted (campaign.py). It reads the model and the driver, never the explorer."""
