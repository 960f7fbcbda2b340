"""Open a local HTML page in headless Chromium (Debian's chromium and chromium-driver, through Selenium) and
report what a reader would meet: console errors, images that do not decode, and a screenshot.

The browser runs with no network (the flags the machine's notes give: no background networking, no
component updates, a fresh profile), so a page that fetched anything from outside would log an error.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1280,2000")

# every image's decode() promise: the names of those that fail or have no pixels
DECODE_ALL = """
const done = arguments[arguments.length - 1];
Promise.all(Array.from(document.images).map(img =>
    img.decode().then(() => img.naturalWidth > 0 ? null : img.alt, () => img.alt)))
  .then(r => done({count: document.images.length, failed: r.filter(x => x !== null),
                   scales: Array.from(document.images).filter(img => img.naturalWidth > 0).map(img =>
                     [img.alt, img.getBoundingClientRect().width / img.naturalWidth])}));
"""


@dataclass
class PageCheck:
    console_errors: list
    images: int
    failed_images: list
    screenshot: Path
    title: str = ""
    #: each decoded image's (alt, displayed width / its pixels) at the window's width (1280 px): the figures are
    #: drawn at DPI 110 with 9 pt text (13.75 px), so a scale below 9 / 13.75 shows text under 9 px
    scales: list = ()

    def smallest(self) -> tuple:
        return min(self.scales, key=lambda s: s[1], default=("", 1.0))


def browser_or_skip() -> tuple[str, str]:
    """(chromium, chromedriver) paths; skips the test when they are missing, unless the environment says
    LNRECENCY_REQUIRE_BROWSER=1 (.ci/run installs them and sets it: in CI a missing browser fails)."""
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium and driver:
        try:
            import selenium  # noqa: F401
        except ImportError:
            chromium = None
    if not (chromium and driver):
        why = "headless Chromium needs Debian's chromium and chromium-driver and the selenium package"
        if os.environ.get("LNRECENCY_REQUIRE_BROWSER") == "1":
            pytest.fail(why + " (LNRECENCY_REQUIRE_BROWSER=1)")
        pytest.skip(why)
    return chromium, driver


def check_page(page: Path, screenshot: Path) -> PageCheck:
    """Load ``page`` (a file) in headless Chromium; its console errors, images that fail to decode, and a
    screenshot written to ``screenshot``."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, driver_path = browser_or_skip()
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for flag in FLAGS:
        opts.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="lnrecency-chromium-")
    opts.add_argument(f"--user-data-dir={profile}")
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=opts, service=Service(executable_path=driver_path))
    try:
        driver.set_script_timeout(60)
        driver.set_page_load_timeout(120)
        driver.get(Path(page).resolve().as_uri())
        deadline = time.monotonic() + 60  # a loaded machine: wait for the whole document before counting images
        while driver.execute_script("return document.readyState") != "complete" and time.monotonic() < deadline:
            time.sleep(0.2)
        decoded = driver.execute_async_script(DECODE_ALL)
        errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        title = driver.title
        driver.save_screenshot(str(screenshot))
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
    return PageCheck(errors, int(decoded["count"]), list(decoded["failed"]), Path(screenshot), title,
                     [tuple(s) for s in decoded["scales"]])
