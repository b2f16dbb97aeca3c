"""jbodcheck's real-Kafka layer (docs/realkafka.md): real KRaft clusters of a given Kafka release, started,
faulted, observed and stopped by the project, to replay the model's traces on the real system.

``realkafka.cluster`` is the model-agnostic harness: it knows Kafka (releases fetched by Maven, processes, the
request gate, the probe, the controller's metadata log), not the model. ``realkafka.driver`` maps the model's
steps and states onto it.
"""
