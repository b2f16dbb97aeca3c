"""KRaft mode (KIP-858, Kafka 3.7 to 4.x): the active controller over its metadata log, brokers replaying it at
their own pace, and their create-or-not decision (issue 31; docs/kraft.md). Imports model.spec and
model.storage only."""
