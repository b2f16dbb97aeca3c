"""`jbodcheck serve`: walk the model by hand in a browser (docs/cli.md, "serve").

- ``walk``: a path (the steps in the URL) re-derived from the initial state; the actions of a state, enabled or
  with the reason their guard gives; every invariant's verdict on a state.
- ``files``: a scenario file, a ``--json`` report or a ``--save-scenario`` file as a path to walk.
- ``page``: the HTML page of a state (the cluster as the HTML trace page draws it, explorer/reports/html.py).
- ``server``: the local web server (the standard library's http.server), one request at a time per thread,
  no session: the URL is the truth.
- ``command``: the click command.
"""
