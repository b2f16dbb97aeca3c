"""Real Kafka in the loop (issue 38): ``realkafka.cluster`` starts and drives real KRaft clusters (model-agnostic);
``realkafka.driver`` replays a KRaft scenario on one and compares it with the model (docs/reproduce.md)."""
