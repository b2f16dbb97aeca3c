"""Shared by tests/cli/test_serve.py and tests/cli/test_serve_browser.py: `jbodcheck serve` in a subprocess, the README's
legacy counterexample as steps, and a small HTTP client that never raises on a 4xx."""
from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request

from support.helpers import REPO

# The README's 4-step breach of KIP-112's rule ("A counterexample": `explore --preset small --variant
# kip112-no-isnew-check`, no_recreate_with_bad_dir).
LEGACY_STEPS = ("CreateTopic(partition=0)", "DirFail(broker=0, dir=0)", "ControllerFailover()",
                "BrokerLeaderAndIsr(broker=0)")
LEGACY_INVARIANT = "no_recreate_with_bad_dir"
URL_LINE = re.compile(r"^jbodcheck serve: (http://\S+/) ")


def env() -> dict:
    out = {k: v for k, v in os.environ.items() if k != "JBODCHECK_PLUGINS"}
    out["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), out.get("PYTHONPATH", "")]))
    return out


@contextlib.contextmanager
def served(*args, extra_env: dict | None = None):
    """`python -m explorer serve ARGS` until the block ends (then SIGINT, as Ctrl-C): (process, URL)."""
    proc = subprocess.Popen([sys.executable, "-m", "explorer", "serve", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=REPO, env={**env(), **(extra_env or {})})
    try:
        line = proc.stdout.readline()
        match = URL_LINE.match(line)
        assert match, (line, proc.stderr.read() if proc.poll() is not None else "")
        yield proc, match.group(1)
    finally:
        if proc.poll() is None:
            proc.send_signal(2)
            proc.wait(timeout=60)
        proc.stdout.close()
        proc.stderr.close()


def fetch(url: str, data: bytes | None = None) -> tuple[int, dict, str]:
    """(status, headers, body) of a request, a 4xx or 5xx included; redirects are not followed."""
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(urllib.request.Request(url, data=data), timeout=60) as r:
            return r.status, dict(r.headers), r.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode("utf-8")
