"""Proofs for any cluster size: KIP-112's protocol core as a parameterized transition system in z3, inductive
invariants checked per action, bounded model checking, and the refinement check that ties the z3 model to the
explicit one (docs/proofs.md)."""
