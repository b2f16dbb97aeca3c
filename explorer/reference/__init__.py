"""The reference pages generated from the code (docs/reference/): the rules and invariants from the catalog's
designs (``rules.py``), the command line from its click definitions (``cli.py``). ``python3 -m explorer.reference``
writes them; ``--check`` says which committed page is stale (tests/docs/test_reference.py runs it)."""
