"""`jbodcheck serve` in a real browser (issue #32's acceptance): Selenium drives Debian's headless Chromium through
its chromedriver against a real `serve` process. It walks the README's legacy counterexample by clicking four
actions, sees the violation, goes back two steps, forks, saves the path with the page's link and replays the saved
file with `jbodcheck replay` to the same verdict. Skipped when selenium, chromium or chromedriver is missing
(`pip install selenium`, `apt-get install chromium chromium-driver`; .ci/run installs them).

``JBODCHECK_SERVE_SCREENSHOT=docs/img/serve.png`` also saves the README's screenshot of the page (at step 3, the
last step before the breach, with the violation further on the path)."""
from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from support.cli import cli
from support.serve_helpers import LEGACY_INVARIANT, LEGACY_STEPS, served

selenium = pytest.importorskip("selenium", reason="selenium is not installed (pip install selenium)")
CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser"))), None)
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(CHROMIUM is None or CHROMEDRIVER is None,
                                reason="no chromium or chromedriver (apt-get install chromium chromium-driver)")

FORK = "BrokerLeaderAndIsr(broker=1)"
WAIT_S = 60


@pytest.fixture
def browser(tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--window-size=1400,1100", f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(arg)
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    options.add_experimental_option("prefs", {"download.default_directory": str(downloads),
                                              "download.prompt_for_download": False})
    # The Debian driver, given by path: Selenium Manager would try to download one.
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.downloads = downloads
    try:
        yield driver
    finally:
        driver.quit()


def _wait(driver, css: str):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT_S).until(ec.presence_of_element_located((By.CSS_SELECTOR, css)))


def _click(driver, css: str, then: str):
    """Click the element, then wait for the page it leads to (an element of it)."""
    from selenium.webdriver.common.by import By

    driver.find_element(By.CSS_SELECTOR, css).click()
    return _wait(driver, then)


def _take(driver, step: str, number: int):
    _click(driver, f'#enabled a.action[data-step="{step}"]', f'#state[data-step="{number}"]')


def _shown_violations(driver) -> list[tuple[str, str]]:
    from selenium.webdriver.common.by import By

    return [(s.get_attribute("data-invariant"), s.get_attribute("data-step"))
            for s in driver.find_elements(By.CSS_SELECTOR, "section.violation:not(.ahead)")]


def _saved(folder: Path) -> Path:
    """The downloaded file, once Chromium has written it (it renames its temporary file to the name the link
    gives when the download is complete)."""
    path = folder / "jbodcheck-path.json"
    deadline = time.monotonic() + WAIT_S
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert path.exists(), f"no download in {folder}: {sorted(p.name for p in folder.iterdir())}"
    return path


def test_walk_the_readme_counterexample_go_back_fork_save_and_replay(browser, tmp_path):
    from selenium.webdriver.common.by import By

    with served("--preset", "small", "--variant", "kip112-no-isnew-check") as (proc, url):
        browser.get(url)
        _wait(browser, 'body[data-ready="1"] #state[data-step="0"]')
        for number, step in enumerate(LEGACY_STEPS, start=1):
            assert _shown_violations(browser) == []
            _take(browser, step, number)
        # The breach, where the search finds it: the banner, the step, the invariant's verdict.
        assert _shown_violations(browser) == [(LEGACY_INVARIANT, "4")]
        assert "violating" in browser.find_element(By.CSS_SELECTOR, 'ol.steps li[data-step="4"]').get_attribute("class")
        verdict = browser.find_element(By.CSS_SELECTOR, f'tr[data-invariant="{LEGACY_INVARIANT}"] .verdict')
        assert verdict.text == "violated"
        if os.environ.get("JBODCHECK_SERVE_SCREENSHOT"):
            _click(browser, 'ol.steps li[data-step="3"] a', '#state[data-step="3"]')
            browser.set_window_size(1400, 1500)
            browser.save_screenshot(os.environ["JBODCHECK_SERVE_SCREENSHOT"])
        # Back two steps: the state after step 2, the steps ahead kept in the path, the breach further on.
        _click(browser, 'ol.steps li[data-step="2"] a', '#state[data-step="2"]')
        assert _shown_violations(browser) == []
        assert "ahead" in browser.find_element(By.CSS_SELECTOR, 'ol.steps li[data-step="3"]').get_attribute("class")
        assert browser.find_elements(By.CSS_SELECTOR, f'section.violation.ahead[data-invariant="{LEGACY_INVARIANT}"]')
        # Fork: another action here replaces the steps ahead; the breach comes again, one step later.
        forked = [*LEGACY_STEPS[:2], FORK, *LEGACY_STEPS[2:]]
        for number, step in enumerate(forked[2:], start=3):
            _take(browser, step, number)
        rows = browser.find_elements(By.CSS_SELECTOR, "ol.steps li .act")
        assert [r.text.split(" + ")[0] for r in rows] == ["initial state", *forked]
        assert _shown_violations(browser) == [(LEGACY_INVARIANT, "5")]
        # Save the path (the page's link: a download) and replay it.
        browser.find_element(By.CSS_SELECTOR, "#save").click()
        saved = _saved(browser.downloads)
    from explorer.scenario import load_scenario

    assert list(load_scenario(str(saved)).steps) == forked
    p = cli("replay", saved)
    assert p.returncode == 1, p.stderr
    assert f"VIOLATION of {LEGACY_INVARIANT}" in p.stdout
    replayed = [line.split(": ", 1)[1].split(" + ")[0] for line in p.stdout.splitlines()
                if line.startswith("Step ") and "initial state" not in line]
    assert replayed[:len(forked)] == forked


def test_a_scenario_file_opens_in_the_page(browser, tmp_path):
    from selenium.webdriver.common.by import By

    scenario = Path(__file__).resolve().parents[2] / "scenarios" / "kip112-1-dir-failure-at-bootstrap.json"
    from explorer.scenario import load_scenario

    steps = load_scenario(str(scenario)).steps
    assert load_scenario(str(scenario)).model == {"preset": "small", "max_records": 2, "consumer": True}
    with served("--preset", "small", "--max-records", 2, "--consumer") as (proc, url):
        browser.get(url)
        _wait(browser, 'body[data-ready="1"]')
        browser.find_element(By.CSS_SELECTOR, "details.open summary").click()
        browser.find_element(By.CSS_SELECTOR, "#open-file").send_keys(str(scenario))
        # The page's script reads the chosen file into the form.
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(browser, WAIT_S).until(
            lambda d: d.find_element(By.CSS_SELECTOR, "#open-text").get_attribute("value"))
        _click(browser, "#open-submit", f'#state[data-step="{len(steps)}"]')
        rows = browser.find_elements(By.CSS_SELECTOR, "ol.steps li .act")
        assert [r.text.split(" + ")[0] for r in rows] == ["initial state", *steps]
