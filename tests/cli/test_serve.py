"""`jbodcheck serve` (explorer/serve/): the path in the URL re-derived from the initial state, every rule's
instances enabled or with the guard's reason (the same as the model's successors), the invariants' verdicts,
violations as a search reports them, scenario files in and out, refused requests (a 4xx and one line, never a
traceback), every design, feature preset and a plugin served, and Ctrl-C / SIGTERM stopping the server (130 / 143).
The page in a real browser: tests/cli/test_serve_browser.py."""
from __future__ import annotations

import json
import re
import signal
import socket
import sys
import threading
import urllib.error
import urllib.request
from html import unescape
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

import pytest

from explorer.catalog import PRESETS, build_model, preset_config
from explorer.reports.report import report_dict
from explorer.scenario import Scenario, load_scenario, replay
from explorer.serve.page import path_url, state_page
from explorer.serve.server import App, Server, host_refused
from explorer.serve.walk import Walker
from model import VARIANTS

from support.helpers import REPO
from support.serve_helpers import LEGACY_INVARIANT, LEGACY_STEPS, fetch, served

LEGACY = preset_config("small", variant="kip112-no-isnew-check")


@pytest.fixture(scope="module")
def legacy():
    """The legacy design on preset small, served in this process: its base URL and its model."""
    model = build_model(LEGACY)
    server = Server("127.0.0.1", 0, App(Walker(model), "small"))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.url, model
    server.shutdown()
    server.server_close()


def _page(base: str, steps, at=None):
    status, headers, body = fetch(base.rstrip("/") + path_url(steps, at))
    return status, body


def _action_links(body: str) -> dict[str, list[str]]:
    """The enabled actions of a page: step -> the path its link takes."""
    out = {}
    for step, href in re.findall(r'<a class="btn action" data-step="([^"]*)" href="([^"]*)"', body):
        out[unescape(step)] = [v for k, v in parse_qsl(urlsplit(unescape(href)).query) if k == "step"]
    return out


def _violations(body: str) -> list[tuple[str, int]]:
    return [(inv, int(step)) for inv, step in
            re.findall(r'<section class="violation[^"]*" data-invariant="([^"]+)" data-step="(\d+)"', body)]


def test_the_readme_counterexample_breaks_the_rule_where_the_search_finds_it(legacy):
    base, model = legacy
    steps = list(LEGACY_STEPS)
    for i in range(len(steps) + 1):
        status, body = _page(base, steps[:i])
        assert status == 200, body
        # Each next step is offered as an action, and its link extends this path by that step.
        if i < len(steps):
            assert _action_links(body)[steps[i]] == steps[:i + 1]
        assert _violations(body) == ([(LEGACY_INVARIANT, 4)] if i == 4 else [])
    # The same verdict as replaying the steps (explorer/scenario.py): the invariant and its message.
    result, _, _ = replay(model, Scenario({}, LEGACY_STEPS, {}), list(model.invariants))
    [v] = result.violations
    assert v.invariant.id == LEGACY_INVARIANT and unescape(body).count(v.message) >= 2   # the banner and the step
    assert re.search(rf'data-invariant="{LEGACY_INVARIANT}"><td><code>{LEGACY_INVARIANT}</code></td><td>transition'
                     rf'</td><td class="verdict">violated', body)


def test_going_back_shows_the_earlier_state_and_an_action_there_forks_the_path(legacy):
    base, model = legacy
    status, body = _page(base, LEGACY_STEPS, at=2)
    assert status == 200
    # The violation is further on the path; the state shown is step 2's (the path keeps the steps ahead).
    assert 'class="violation ahead"' in body and 'id="state" data-step="2"' in body
    assert re.search(r'<li class="row violating ahead" data-step="4">', body)
    links = _action_links(body)
    fork = "BrokerCrash(broker=1)"
    assert links[fork] == [*LEGACY_STEPS[:2], fork]
    status, body = _page(base, links[fork])
    assert status == 200 and _violations(body) == [] and 'id="state" data-step="3"' in body


def _enabled(walker, state) -> set[str]:
    return {c.step for rc in walker.choices(state) for c in rc.enabled}


@pytest.mark.parametrize("preset,params", [("tiny", {"variant": v}) for v in VARIANTS]
                         + [(p, {}) for p in PRESETS] + [("tiny", {"eager_metadata": False})])
def test_every_design_and_feature_preset_is_served_with_the_models_own_actions(preset, params):
    cfg = preset_config(preset, **params)
    model = build_model(cfg)
    walker = Walker(model)
    # A few steps in, always the first enabled action: at every state, the enabled actions are the model's
    # successors, and every rule is listed (enabled, or with each instance's reason).
    steps: list[str] = []
    for _ in range(4):
        state = walker.nodes(tuple(steps))[-1].state
        successors = {model.rules[a.rule].label(a.args) for a, _ in model.successors(state)}
        assert _enabled(walker, state) == successors
        page = state_page(walker, preset, tuple(steps), len(steps))
        assert all(f'data-rule="{r.name}"' in page for r in model.rules)
        assert all(re.search(rf'data-invariant="{i.id}"><td>', page) for i in walker.invariants)
        if not successors:
            break
        steps.append(sorted(successors)[0])


def test_disabled_instances_say_why_with_the_guards_reason(legacy):
    base, model = legacy
    walker = Walker(model)
    state = walker.nodes(())[-1].state
    rule = model.rule("BrokerLeaderAndIsr")
    reasons = {rule.label(args): rule.guard(model, state, *args) for args in rule.domain(model)}
    assert all(reasons.values())                   # nothing to handle before the topic exists
    status, body = _page(base, [])
    for step, reason in reasons.items():
        assert f'<li data-step="{step}"><code>{step}</code>: {reason}</li>' in unescape(body)
    assert unescape(body).count(rule.reference) >= 1


def test_the_saved_path_replays_to_the_same_verdict(legacy, tmp_path):
    base, model = legacy
    status, headers, body = fetch(base.rstrip("/") + path_url(LEGACY_STEPS, base="/scenario.json"))
    assert status == 200 and "attachment" in headers["Content-Disposition"]
    path = tmp_path / "path.json"
    path.write_text(body)
    scenario = load_scenario(str(path))
    assert scenario.steps == LEGACY_STEPS and scenario.model["preset"] == "small"
    result, _, _ = replay(model, scenario, list(model.invariants))
    assert [v.invariant.id for v in result.violations] == [LEGACY_INVARIANT]
    # Saved from step 2 (after going back): the steps up to the state shown.
    status, _, body = fetch(base.rstrip("/") + path_url(LEGACY_STEPS, 2, base="/scenario.json"))
    assert json.loads(body)["steps"] == list(LEGACY_STEPS[:2])


def _open(base: str, text: str, name: str = "s.json"):
    return fetch(base.rstrip("/") + "/open", urlencode({"text": text, "name": name}).encode())


def test_a_scenario_or_a_reports_counterexample_opens_as_its_path(legacy, tmp_path):
    base, model = legacy
    scenario = {"model": {"preset": "small", "variant": "legacy"}, "steps": list(LEGACY_STEPS)}
    status, headers, _ = _open(base, json.dumps(scenario))
    assert status == 303 and headers["Location"] == path_url(LEGACY_STEPS)
    # A --json report: its first counterexample (labels with "+ UpdateMetadata at ..." are steps again).
    result, _, _ = replay(model, Scenario({}, LEGACY_STEPS, {}), list(model.invariants))
    report = report_dict(model, result)
    assert "+ UpdateMetadata" in report["violations"][0]["trace"][3]["action"]
    status, headers, _ = _open(base, json.dumps(report), "report.json")
    assert status == 303 and headers["Location"] == path_url(LEGACY_STEPS)


@pytest.mark.parametrize("text,words", [
    ("{not json", ["s.json is not valid JSON"]),
    ('{"model": {"preset": "tiny"}, "steps": []}', ["another model", "brokers=2 (served: 3)"]),
    ('{"model": {"preset": "small", "variant": "legacy"}, "steps": ["Nope()"]}', ["no rule named Nope"]),
    ('{"model": {"preset": "small", "variant": "legacy"}, "steps": ["BrokerCrash(broker=0)", "BrokerCrash(broker=0)"]}',
     ["step 2 BrokerCrash(broker=0) is not enabled: broker 0 is down"]),
    ('{"tool": "jbodcheck"}', ["the report s.json has no counterexample to walk"]),
    ('{"tool": "jbodcheck", "violations": [{"trace": [{}, {"action": 3}]}]}', ["s.json is not a report jbodcheck can show"]),
    ("", ["no file to open"]),
])
def test_a_file_that_cannot_be_walked_is_refused_in_one_line(legacy, text, words):
    base, _ = legacy
    status, _, body = _open(base, text)
    _assert_refused(status, body, 400, words)


def _assert_refused(status, body, code, words):
    assert status == code, (status, body[-500:])
    assert "Traceback" not in body
    [message] = re.findall(r'<p class="error" id="error">([^<]*)</p>', body)
    for w in words:
        assert w in unescape(message), (w, message)


@pytest.mark.parametrize("query,code,words", [
    ("?step=Nope()", 400, ["step 1 'Nope()': no rule named Nope"]),
    ("?step=" + quote("CreateTopic(partition=7)"), 400, ["arguments out of range"]),
    ("?step=" + quote("BrokerLeaderAndIsr(broker=0)"), 409, ["step 1 BrokerLeaderAndIsr(broker=0) is not enabled: "]),
    ("?step=" + quote("CreateTopic(partition=0)") + "&at=2", 400, ["'at' must be a step number from 0 to 1"]),
    ("?step=" + quote("CreateTopic(partition=0)") + "&at=x", 400, ["'at' must be a step number"]),
    ("?foo=1", 400, ["unknown URL parameter(s): foo"]),
    ("?" + "&".join(["step=" + quote("ControllerFailover()")] * 1003), 400, ["more than 1000 steps"]),
])
def test_a_bad_path_is_a_4xx_with_one_line(legacy, query, code, words):
    base, _ = legacy
    status, _, body = fetch(base + query)
    _assert_refused(status, body, code, words)


def test_a_huge_at_or_a_huge_post_is_refused(legacy):
    base, _ = legacy
    status, _, body = fetch(base + "?at=" + "9" * 5000)
    _assert_refused(status, body, 400, ["'at' must be a step number from 0 to 0"])
    host, port = urlsplit(base).hostname, urlsplit(base).port
    with socket.create_connection((host, port)) as s:      # a Content-Length far above the limit, no body sent
        s.sendall(b"POST /open HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 99999999999\r\n\r\n")
        answer = s.makefile("rb").read().decode()          # the server closes the connection
    assert answer.startswith("HTTP/1.1 413 ") and "the posted file is too large" in answer


def test_a_plugin_check_that_raises_is_the_checkers_failure_not_a_violation():
    from explorer.errors import guard_invariants
    from invariants import invariant

    @invariant("serve_test_raises", kind="state", statement="raises", reference="a test")
    def raises(model, state):
        raise RuntimeError("the plugin's bug")

    model = build_model(preset_config("tiny"), invariants=[*build_model(preset_config("tiny")).invariants,
                                                            raises.invariant])
    model.invariants = tuple(guard_invariants(model.invariants))
    page = state_page(Walker(model), "tiny", (), 0)
    assert re.search(r'<tr class="check-raised" data-invariant="serve_test_raises">.*?<td class="verdict">check '
                     r"raised</td><td>RuntimeError: the plugin&#x27;s bug</td>", page)
    assert "The check of <code>serve_test_raises</code> raised RuntimeError: the plugin&#x27;s bug" in page
    assert "Violation of" not in page


def test_unknown_pages_and_methods_are_refused(legacy):
    base, _ = legacy
    status, _, body = fetch(base + "nowhere")
    _assert_refused(status, body, 404, ["no page at /nowhere"])
    status, _, body = fetch(base + "scenario.json", data=b"x")
    _assert_refused(status, body, 405, ["only /open takes a POST"])


def test_a_request_for_another_host_name_is_refused(legacy):
    base, _ = legacy
    port = base.rstrip("/").rsplit(":", 1)[1]
    request = urllib.request.Request(base, headers={"Host": f"rebound.example:{port}"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=60)
    assert refused.value.code == 421 and "127.0.0.1 or localhost only" in refused.value.read().decode()
    assert fetch(base)[0] == 200 and fetch(base.replace("127.0.0.1", "localhost"))[0] == 200


@pytest.mark.parametrize("bound, header, refused", [
    ("127.0.0.1", "127.0.0.1:8080", False), ("127.0.0.1", "localhost", False), ("::1", "[::1]:80", False),
    ("127.0.0.1", "evil.example:8080", True), ("127.0.0.1", "", True),
    # issue 41: a loopback address other than 127.0.0.1 used to turn the check off
    ("127.0.0.2", "127.0.0.2:8080", False), ("127.0.0.2", "evil.example:8080", True),
    ("127.0.0.2", "localhost:8080", False)])
def test_host_names_a_loopback_server_answers(bound, header, refused):
    assert host_refused(bound, header) is refused


@pytest.mark.parametrize("host", ["", "0.0.0.0", "::", "192.0.2.1", "example.com", " "])
def test_serve_refuses_a_host_that_is_not_loopback(capsys, host):
    """The page has no authentication: --host '' bound every interface and turned the Host check off (issue 41)."""
    from support.helpers import in_process

    code, out, err = in_process(capsys, "serve", "--preset", "tiny", "--host", host)
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1 and "not a loopback address" in lines[0], err


def test_a_server_on_another_loopback_address_keeps_the_host_check():
    model = build_model(preset_config("tiny"))
    try:
        server = Server("127.0.0.2", 0, App(Walker(model), "tiny"))
    except OSError as e:
        pytest.skip(f"127.0.0.2 cannot be listened on here: {e}")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        request = urllib.request.Request(server.url, headers={"Host": f"rebound.example:{port}"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=60)
        assert refused.value.code == 421
        assert fetch(server.url)[0] == 200
    finally:
        server.shutdown()
        server.server_close()


def test_the_back_link_of_a_disabled_step_is_the_path_before_it(legacy):
    base, _ = legacy
    steps = [*LEGACY_STEPS[:2], "BrokerRestart(broker=0)", LEGACY_STEPS[2]]
    status, body = _page(base, steps)
    _assert_refused(status, body, 409, ["step 3 BrokerRestart(broker=0) is not enabled"])
    [href] = re.findall(r'<a class="btn" id="back" href="([^"]*)"', body)
    assert unescape(href) == path_url(LEGACY_STEPS[:2])


# ---- the command -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_the_server_cleanly(sig):
    with served("--preset", "tiny") as (proc, url):
        status, _, body = fetch(url)
        assert status == 200 and 'data-rule="CreateTopic"' in body
        assert url.startswith("http://127.0.0.1:")
        proc.send_signal(sig)
        assert proc.wait(timeout=60) == 128 + sig
        err = proc.stderr.read()
    assert err.strip() == f"jbodcheck serve: stopped by signal {int(sig)}", err
    port = int(urlsplit(url).port)
    with socket.socket() as s:                     # nothing listens there any more
        assert s.connect_ex(("127.0.0.1", port)) != 0


def test_open_opens_the_url_in_the_browser_the_environment_names(tmp_path):
    opened = tmp_path / "opened"
    # webbrowser runs $BROWSER with the URL for %s: here a script that writes it down.
    browser = f"{sys.executable} -c \"import sys; open(sys.argv[2], 'w').write(sys.argv[1])\" %s {opened}"
    with served("--preset", "tiny", "--open", extra_env={"BROWSER": browser}) as (proc, url):
        assert fetch(url)[0] == 200       # serving: the browser was started before
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130
    assert opened.read_text() == url


def test_a_plugin_feature_is_served_with_its_rule():
    example = REPO / "examples" / "preferred_election.py"
    with served("--plugin", example, "--preset", "preferred-election") as (proc, url):
        status, _, body = fetch(url)
    assert status == 200
    assert 'data-rule="PreferredLeaderElection"' in body and "preferred_elections" in body


def test_a_port_in_use_is_bad_input():
    from support.cli import assert_bad_input, cli

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        p = cli("serve", "--preset", "tiny", "--port", s.getsockname()[1], timeout=120)
    assert_bad_input(p, "cannot listen on 127.0.0.1:", "in use")


def test_serve_is_listed_in_the_help():
    from support.cli import cli

    p = cli("--help")
    assert p.returncode == 0 and re.search(r"^\s+serve\s+Walk the model by hand", p.stdout, re.M)


def _stalled_post(url: str) -> socket.socket:
    """A client that sends a POST's headers and not its body."""
    host, port = urlsplit(url).hostname, urlsplit(url).port
    conn = socket.create_connection((host, port), timeout=60)
    conn.sendall(f"POST /open HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                 "Content-Length: 100\r\n\r\n".encode())
    return conn


def test_a_client_that_stalls_its_post_body_holds_up_no_other_request(legacy):
    """Its body is read outside the model's lock (issue 46: every other request hung behind it)."""
    base, _ = legacy
    conn = _stalled_post(base)
    try:
        answered = {}
        other = threading.Thread(target=lambda: answered.update(page=_page(base, LEGACY_STEPS[:1])), daemon=True)
        other.start()
        other.join(timeout=50)
        assert answered.get("page", (None,))[0] == 200, "a request hung behind the stalled POST"
        conn.setblocking(False)
        with pytest.raises(BlockingIOError):
            conn.recv(1)                 # the stalled client is still waiting: the page was served meanwhile
    finally:
        conn.close()


def test_a_post_body_that_never_arrives_is_answered_408():
    model = build_model(preset_config("tiny"))
    server = Server("127.0.0.1", 0, App(Walker(model), "tiny"), request_timeout=0.2)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        conn = _stalled_post(server.url)
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = conn.recv(65536)
            if not chunk:
                break
            answer += chunk
        conn.close()
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
        assert fetch(server.url)[0] == 200
    finally:
        server.shutdown()
        server.server_close()
