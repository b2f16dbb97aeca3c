"""What the test modules share: no test module imports another (docs/architecture.md, "Tests"); they import from here."""
