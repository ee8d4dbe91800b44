"""The README's screenshots of a report, taken with the system's headless Chromium (Debian packages
chromium and chromium-driver) through selenium: the index and one paper page, first screen, at 1400 px.

Run:  python docs/screenshot.py [REPORT_DIR] [PAPER]     (default: reports defedavg)
Writes docs/report-index.png and docs/report-<PAPER>.png.
"""

from __future__ import annotations

import sys
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

HERE = Path(__file__).resolve().parent


def main() -> None:
    reports = Path(sys.argv[1] if len(sys.argv) > 1 else "reports").resolve()
    paper = sys.argv[2] if len(sys.argv) > 2 else "defedavg"
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.set_window_size(1400, 1000)
        for page, out in (("index.html", "report-index.png"), (f"{paper}.html", f"report-{paper}.png")):
            driver.get((reports / page).as_uri())
            driver.save_screenshot(str(HERE / out))
            print(HERE / out)
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
