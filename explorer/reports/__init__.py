"""What a run shows, from the model value and the search's result (above the searches, below the CLI):

  report.py        the JSON report and the text summary; report_shape.py: the shape `view` reads back
  bounds.py        what a verdict covers (the model's bounds, the search's limits, fairness)
  render.py        states and traces as text and as dicts
  html.py          the self-contained HTML page; itf.py: ITF traces; dot.py: the state graph in DOT
  artifacts.py     the trace outputs of a run (--html, --itf, --save-scenario, --save-lasso, --dot)
  progress.py      progress lines or a live display on stderr
"""
