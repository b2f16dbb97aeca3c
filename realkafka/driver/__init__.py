"""The real-cluster driver (issue 38; docs/reproduce.md): a KRaft scenario run on a real Kafka cluster beside the
model. mapping.py says how each rule of the model is driven or observed; plan.py the model run the cluster
follows; projection.py and observed.py put the model's state and the real observation in one shape (view.py);
compare.py names their differences; checks.py the violations; run.py drives the cluster; report.py prints."""
