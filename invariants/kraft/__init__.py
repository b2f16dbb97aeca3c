"""KRaft mode's safety properties (the facts of KIP-858's implementation; docs/kraft.md)."""
