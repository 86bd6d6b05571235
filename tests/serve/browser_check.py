"""A real browser on `roomspace serve` (issue 46): headless Chromium (Debian's chromium and chromium-driver) driven
by Selenium. It builds two rooms with pictures, serves them, browses to a vision question and checks its picture
loaded, answers five sampled questions as a person (three right, two wrong, stopping the server after two and
resuming), then checks that `roomspace score` on the written file gives that accuracy and the results page the
same table. Runs in .venv-serve (`make test-serve`), calling roomspace from .venv: not a test_*.py, never collected
by default; it saves the README's screenshots when SCREENSHOTS names a folder."""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

ROOMSPACE = Path(os.environ.get("ROOMSPACE", Path(sys.prefix).parent / ".venv" / "bin" / "roomspace")).resolve()
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
SEED, ROOMS, BASE = 45, 2, "n5_m4_d144"
RIGHT = (True, True, False, True, False)  # how the five sampled questions are answered
SERVED = re.compile(r"at (http://127\.0\.0\.1:\d+)/")


def roomspace(*argv: str, cwd: Path) -> str:
    done = subprocess.run([str(ROOMSPACE), *argv], cwd=cwd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("serve")
    roomspace("scenes", "--count", str(ROOMS), "--seed", str(SEED), "--out", "scenes", "--workers", "1", cwd=folder)
    roomspace("build", "--rooms", str(ROOMS), "--seed", str(SEED), "--scenes", "scenes", "--out", "build",
              "--configs", BASE, "--vision", BASE, "--workers", "1", cwd=folder)
    return folder


class Server:
    """`roomspace serve` on a free port, in a process of its own."""

    def __init__(self, folder: Path) -> None:
        self.process = subprocess.Popen([str(ROOMSPACE), "serve", "build", "--port", "0", "--predictions", "answers"],
                                        cwd=folder, stderr=subprocess.PIPE, text=True)
        line = self.process.stderr.readline()
        found = SERVED.search(line)
        assert found, line
        self.url = found.group(1)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1000"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


def screenshot(driver, name: str) -> None:
    folder = os.environ.get("SCREENSHOTS")
    if folder:
        height = driver.execute_script("return document.body.scrollHeight")
        driver.set_window_size(1280, min(max(height + 40, 600), 2400))
        driver.save_screenshot(str(Path(folder) / name))
        driver.set_window_size(1280, 1000)


@pytest.mark.browser
def test_browse_answer_resume_and_score_in_a_browser(built, browser):
    server = Server(built)
    try:
        browser.get(server.url + "/")
        browser.get(browser.find_element(By.LINK_TEXT, f"vision_{BASE}").get_attribute("href"))
        assert "question" in browser.find_element(By.ID, "count").text
        links = [a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "#questions a")]
        for link in links:  # the first question sent with its picture (a vision question asked as text has none)
            browser.get(link)
            if browser.find_elements(By.ID, "picture"):
                break
        picture = browser.find_element(By.ID, "picture")
        assert browser.execute_script("return arguments[0].complete && arguments[0].naturalWidth", picture) > 100
        assert browser.find_element(By.ID, "answer").text and browser.find_elements(By.CSS_SELECTOR, "#witness td")
        fitting = browser.find_element(By.ID, "fit-blind").get_attribute("href")  # fitted in the background
        browser.get(fitting)
        for _ in range(120):
            if browser.find_element(By.ID, "blind").text.startswith("majority:"):
                break
            time.sleep(0.5)
            browser.get(fitting)
        assert browser.find_element(By.ID, "blind").text.startswith("majority:")
        screenshot(browser, "serve-question.png")

        browser.get(server.url + "/answer")
        browser.find_element(By.NAME, "name").send_keys("tester")
        limit = browser.find_element(By.NAME, "limit")
        limit.clear()
        limit.send_keys("5")
        browser.find_element(By.CSS_SELECTOR, f"select[name=config] option[value='{BASE}']").click()
        browser.find_element(By.CSS_SELECTOR, "#begin button").click()
        WebDriverWait(browser, 30).until(lambda driver: driver.find_elements(By.ID, "number"))
        expected = {"YN": [], "FR": []}
        for number, right in enumerate(RIGHT, 1):
            if number == 3:  # stop the server mid-session: the same name resumes at the third question
                server.stop()
                server = Server(built)
                browser.get(server.url + "/answer/tester")
            assert browser.find_element(By.ID, "number").text == str(number)
            expected[answer(browser, server.url, right)].append(right)
        assert browser.find_element(By.ID, "done").text == "All 5 questions answered"
    finally:
        server.stop()

    lines = (built / "answers" / "human-tester.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["roomspace_predictions"]["sample"] == {"limit": 5, "seed": 0}
    assert len(lines) == 6 and all(isinstance(json.loads(line)["seconds"], float) for line in lines[1:])
    roomspace("score", "build", "--predictions", "answers/human-tester.jsonl", "--json", "scores.json", "--quiet",
              cwd=built)
    scored = json.loads((built / "scores.json").read_text())
    (group,) = scored["groups"]
    measured = group["overall"]["systems"]["human:tester"]
    for question_type, metric in (("YN", "yn_accuracy"), ("FR", "fr_exact")):
        answers = expected[question_type]
        assert measured[f"{question_type.lower()}_items"] == len(answers)
        if answers:
            assert measured[metric]["value"] == pytest.approx(sum(answers) / len(answers))

    server = Server(built)
    try:
        markdown = roomspace("score", "build", "--predictions", "answers/human-tester.jsonl", "--baseline", "random",
                             "--quiet", cwd=built)
        browser.get(server.url + "/results?predictions=human-tester.jsonl&baseline=random")
        page = browser.find_element(By.ID, "report").text
        row = next(line for line in markdown.splitlines() if line.startswith("| human:tester"))
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        shown = next(line for line in page.splitlines() if line.startswith("human:tester"))
        assert shown.split() == " ".join(cells).split()  # the same numbers, cell by cell
        assert browser.execute_script("return [...document.images].every(i => i.complete && i.naturalWidth > 0)")
        screenshot(browser, "serve-results.png")
    finally:
        server.stop()


def answer(browser, url: str, right: bool) -> str:
    """Answer the question on screen rightly or wrongly, reading its answer from its browse page; its type."""
    config = browser.find_element(By.NAME, "config").get_attribute("value")
    question = browser.find_element(By.NAME, "question").get_attribute("value")
    session = browser.current_url
    browser.get(f"{url}/question/{config}/{question}")
    truth = [word.strip() for word in browser.find_element(By.ID, "answer").text.split(",")]
    browser.get(session)
    choices = browser.find_elements(By.NAME, "choice")
    question_type = "YN" if choices[0].get_attribute("type") == "radio" else "FR"
    words = [choice.get_attribute("value") for choice in choices]
    if question_type == "YN":
        ticked = truth if right else [word for word in words if word not in truth]
    else:  # wrong: one option more than the answer set, or one fewer where it holds them all
        others = [word for word in words if word not in truth]
        ticked = truth if right else truth + others[:1] if others else truth[1:]
    for choice in choices:
        if choice.get_attribute("value") in ticked:
            choice.click()
    browser.find_element(By.ID, "submit").click()
    WebDriverWait(browser, 30).until(lambda driver: answered(driver, question))  # the answer is written
    return question_type


def answered(browser, question: str) -> bool:
    """Whether the page has moved on from `question`: the next question, or the end."""
    try:
        if browser.find_elements(By.ID, "done"):
            return True
        shown = browser.find_elements(By.NAME, "question")
        return bool(shown) and shown[0].get_attribute("value") != question
    except StaleElementReferenceException:
        return False
