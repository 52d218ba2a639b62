"""The course as a learner meets it: JupyterLab in headless Chromium, chapters run, widgets used.

nbval (the notebook tests) proves the cells run in a kernel. This proves the page works: the
chapter opens in a real JupyterLab, Run > Run All Cells finishes without an error, every widget
renders as a widget (not "Loading widget..." or a text repr) and reacts to a click or a drag.

The test starts its own JupyterLab on 127.0.0.1 (free port, random token) over a copy of the
notebooks, so autosave never touches the committed ones, and shuts it down even on failure.
Screenshots land in ``test-output/browser/`` (not committed); ``make screenshots`` copies chosen
ones into ``figures/``.

Needs Debian's ``chromium`` (``apt-get install chromium``) or ``PAGED_CHROMIUM=/path/to/chrome``.
Without it the tests skip, unless ``PAGED_REQUIRE_BROWSER=1`` (set by ``.ci/run``) makes that a
failure.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from paged.viz import widget_text as T

try:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect, sync_playwright
except ImportError:  # the tests skip with an install hint
    sync_playwright = None

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "test-output" / "browser"
# The English edition: every chapter, every widget interaction. The Korean edition runs the same
# code, so it needs what differs there: Hangul rendering and Korean outputs (checkers, figures,
# widgets), and one interaction per widget kind: chapters 2, 3, 4 and 9, and chapter 8, whose
# copy-on-write explorer (chapter 3's block-table explorer, forked) README.ko.md shows.
ENGLISH = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
KOREAN = [
    "02_contiguous_allocation.ipynb",
    "03_paging.ipynb",
    "04_head_to_head.ipynb",
    "08_sharing_and_names.ipynb",
    "09_when_blocks_run_out.ipynb",
]
CHAPTERS = ENGLISH + [f"ko/{name}" for name in KOREAN]
STARTUP_S = 90  # JupyterLab's first start with a cold disk cache
CHAPTER_S = 300  # run-all of the slowest chapter takes ~15 s here
UI_MS = 30_000  # one click or drag to a redrawn widget
# Chromium on a machine with no outside network (see the env notes): no background fetches.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LAB_SETTINGS = {
    # Render every cell (no virtual scrolling), so the page holds the whole notebook.
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    # No news or update toasts over the cells.
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
}

pytestmark = pytest.mark.browser


def _chromium() -> str:
    wanted = os.environ.get("PAGED_CHROMIUM") or "chromium"
    path = shutil.which(wanted)
    missing = None
    if sync_playwright is None:
        missing = "Playwright for Python is missing: pip install -e '.[dev]'"
    elif path is None:
        missing = (
            f"Chromium not found ({wanted!r}): install Debian's package "
            "(sudo apt-get install chromium) or point PAGED_CHROMIUM at a Chrome/Chromium binary"
        )
    if missing:
        if os.environ.get("PAGED_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser test required (PAGED_REQUIRE_BROWSER=1) but {missing}")
        pytest.skip(missing)
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A JupyterLab server on loopback over a scratch copy of notebooks/ and figures/."""

    def __init__(self, scratch: Path):
        self.root = scratch / "course"
        for folder in ("notebooks", "figures"):
            shutil.copytree(ROOT / folder, self.root / folder)
        self.port, self.token = _free_port(), secrets.token_hex(16)
        self.url = f"http://127.0.0.1:{self.port}"
        jupyter = scratch / "jupyter"
        for name, settings in LAB_SETTINGS.items():
            path = jupyter / "settings" / f"{name}.jupyterlab-settings"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(settings))
        env = dict(
            os.environ,
            # Nothing from the user's own Jupyter or IPython set-up leaks in.
            JUPYTER_CONFIG_DIR=str(jupyter / "config"),
            JUPYTER_DATA_DIR=str(jupyter / "data"),
            JUPYTER_RUNTIME_DIR=str(jupyter / "runtime"),
            JUPYTERLAB_SETTINGS_DIR=str(jupyter / "settings"),
            JUPYTERLAB_WORKSPACES_DIR=str(jupyter / "workspaces"),
            IPYTHONDIR=str(jupyter / "ipython"),
        )
        cmd = [
            sys.executable,
            "-m",
            "jupyter",
            "lab",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
        ]
        if os.geteuid() == 0:
            cmd.append("--allow-root")
        SHOTS.mkdir(parents=True, exist_ok=True)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # one server per xdist worker
        self.log_path = SHOTS / f"jupyterlab{'-' + worker if worker else ''}.log"
        self._log = self.log_path.open("w")
        # Own process group: the kernels it starts can be stopped with it.
        self.proc = subprocess.Popen(
            cmd, env=env, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def api(self, path: str, method: str = "GET") -> object:
        headers = {"Authorization": f"token {self.token}"}
        request = urllib.request.Request(f"{self.url}/api/{path}", method=method, headers=headers)
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def wait_until_up(self) -> None:
        deadline = time.monotonic() + STARTUP_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"JupyterLab exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                self.api("status")
                return
            except OSError:
                time.sleep(0.5)
        pytest.fail(f"JupyterLab did not answer within {STARTUP_S} s:\n{self.log_tail()}")

    def log_tail(self, lines: int = 30) -> str:
        self._log.flush()
        return "\n".join(self.log_path.read_text().splitlines()[-lines:])

    def shutdown(self) -> None:
        try:
            self.api("shutdown", method="POST")  # stops its kernels too
            self.proc.wait(timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            pass
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self._log.close()


@pytest.fixture(scope="module")
def chromium_path():
    return _chromium()


@pytest.fixture(scope="module")
def lab(chromium_path, tmp_path_factory):
    server = Lab(tmp_path_factory.mktemp("lab"))
    try:
        server.wait_until_up()
        yield server
    finally:
        server.shutdown()


@pytest.fixture(scope="module")
def browser(chromium_path):
    with sync_playwright() as p:
        chromium = p.chromium.launch(
            executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield chromium
        finally:
            chromium.close()


class Problems:
    """What the page complained about: uncaught exceptions, console errors, failed local loads."""

    def __init__(self, page, lab: Lab):
        self.items: list[str] = []
        local = lab.url

        def on_console(msg):
            # A failed load from an outside host (the Colab badge, offline) is not our bug.
            if msg.type == "error" and msg.location.get("url", local).startswith(local):
                self.items.append(f"console: {msg.text}")

        def on_failed(request):
            if request.url.startswith(local):
                self.items.append(f"request failed: {request.url} {request.failure}")

        page.on("pageerror", lambda err: self.items.append(f"page error: {err}"))
        page.on("console", on_console)
        page.on("requestfailed", on_failed)


def _open_and_run_all(page, lab: Lab, chapter: str) -> None:
    page.goto(f"{lab.url}/lab/tree/notebooks/{chapter}?token={lab.token}&reset")
    status = page.locator(".jp-StatusBar-Widget").get_by_text(re.compile(r"\| Idle$"))
    status.wait_for(timeout=STARTUP_S * 1000)  # kernel started and idle
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()


def _wait_for_run_all(page, expected_cells: int) -> tuple[list[str], bool]:
    """Poll the input prompts until every code cell shows its number, or an error stops the run;
    also whether a progress bar (`paged.progress`) was on the page while the cells ran.

    A cell whose source is hidden (a prediction's check) shows a placeholder, whose prompt has no
    number: those are counted as placeholders, and the kernel must be idle again at the end (the
    saved notebook's execution counts then say whether they ran)."""
    deadline = time.monotonic() + CHAPTER_S
    prompts: list[str] = []
    bar_seen = False
    idle = page.locator(".jp-StatusBar-Widget").get_by_text(re.compile(r"\| Idle$"))
    bars = page.locator(".jp-OutputArea-output .widget-hprogress")
    while time.monotonic() < deadline:
        bar_seen = bar_seen or bars.count() > 0
        prompts = page.locator(".jp-CodeCell .jp-InputPrompt").all_inner_texts()
        numbered = [p for p in prompts if re.fullmatch(r"\[\d+\]:", p.strip())]
        hidden = page.locator(".jp-CodeCell .jp-InputPlaceholder").count()
        if len(numbered) + hidden == expected_cells and (not hidden or idle.count()):
            return prompts, bar_seen
        if page.locator(".jp-OutputArea-output", has_text="Traceback").count():
            return prompts, bar_seen
        time.sleep(0.5)
    return prompts, bar_seen


def _save(page, path: Path) -> dict:
    """Save in JupyterLab and read the notebook back once the new file is whole: its mtime
    changes when writing starts, so wait (30 s at most) until it also parses."""
    before = path.stat().st_mtime_ns
    page.keyboard.press("Control+s")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if path.stat().st_mtime_ns != before:
            try:
                return json.loads(path.read_text())
            except json.JSONDecodeError:  # caught mid-write (an empty or partial file)
                pass
        time.sleep(0.2)
    raise AssertionError(f"JupyterLab did not save {path.name} as a whole notebook within 30 s")


def _widget_outputs(page):
    """Output areas that hold a rendered ipywidget (top-level box of the explorer)."""
    return page.locator(".jp-OutputArea-output:has(> .jupyter-widgets)")


def _drawn(widget) -> bytes:
    """Pixels of the widget's matplotlib picture (its first <img>)."""
    image = widget.locator("img").first
    image.scroll_into_view_if_needed()
    return image.screenshot()


def _changes_drawing(page, widget, action, name: str) -> None:
    """Do `action` to the widget; the picture it draws must change (pixels, not just the URL)."""
    widget.screenshot(path=SHOTS / f"{name}_before.png")
    image = widget.locator("img").first
    src, pixels = image.get_attribute("src"), _drawn(widget)
    action()
    try:
        page.wait_for_function(
            "([img, src]) => img.getAttribute('src') !== src && img.complete && img.naturalWidth",
            arg=[image.element_handle(), src],
            timeout=UI_MS,
        )
    except PlaywrightTimeout:
        pytest.fail(f"{name}: the widget did not redraw within {UI_MS / 1000:.0f} s")
    assert _drawn(widget) != pixels, f"{name}: the picture did not change"
    widget.screenshot(path=SHOTS / f"{name}_after.png")


def _said(lang: str, message, **fields) -> str:
    """What `message` reads in the edition of `lang` (the kernel there has PAGED_LANG=lang)."""
    saved = os.environ.get("PAGED_LANG")
    os.environ["PAGED_LANG"] = lang
    try:
        return message.format(**fields) if fields else str(message)
    finally:
        if saved is None:
            del os.environ["PAGED_LANG"]
        else:
            os.environ["PAGED_LANG"] = saved


def _button(widget, lang, message):
    """A widget's button by its caption (not get_by_role: the icon glyph is part of its name)."""
    caption = re.escape(_said(lang, message))
    return widget.locator("button", has_text=re.compile(rf"^\s*{caption}\s*$"))


def _counters(widget, lang):
    """The explorer's status line, found by its "step N" whatever N is now."""
    any_step = re.escape(_said(lang, T.STEP_N, step=12345)).replace("12345", r"\d+")
    return widget.locator(".widget-html", has_text=re.compile(any_step))


def _step_allocator(page, widget, lang) -> None:
    """One click on "step" advances both runs by steps/click (20) from the chapter's 100."""
    counters = _counters(widget, lang)
    assert _said(lang, T.STEP_N, step=100) + " " in counters.inner_text()
    step = _button(widget, lang, T.STEP)
    _changes_drawing(page, widget, step.click, f"{lang}_allocator_explorer")
    assert _said(lang, T.STEP_N, step=120) + " " in counters.inner_text()


def _append_token(page, widget, lang) -> None:
    append = _button(widget, lang, T.APPEND)
    _changes_drawing(page, widget, append.click, f"{lang}_block_table_explorer")
    table = widget.inner_text()
    assert _said(lang, T.APPENDED, seq="'A'", table="[").split("[")[0] in table


def _copy_on_write(page, widget, lang) -> None:
    def write_into_fork():
        widget.locator("select").select_option("B")
        _button(widget, lang, T.APPEND).click()

    _changes_drawing(page, widget, write_into_fork, f"{lang}_copy_on_write")
    assert _said(lang, T.COPIED, old=0, new=0).split(":")[0].strip() in widget.inner_text()


def _drag_block_size(page, widget, lang) -> None:
    """Drag the slider's handle two stops to the left, as a mouse would (64 -> 16)."""
    readout = widget.locator(".widget-readout").first
    assert readout.inner_text() == "64"  # the value the chapter's cell set
    handle = widget.locator(".noUi-handle").first
    stops = int(float(handle.get_attribute("aria-valuemax")))  # options are indices 0..stops

    def drag():
        track = widget.locator(".noUi-base").first.bounding_box()
        box = handle.bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        page.mouse.move(x, y)
        page.mouse.down()
        page.mouse.move(x - 2 * track["width"] / stops, y, steps=8)
        page.mouse.up()

    _changes_drawing(page, widget, drag, f"{lang}_block_size_explorer")
    assert readout.inner_text() == "16"
    sentence = _said(lang, T.BLOCK_SIZE_READOUT, block=16, empty=0, entries=0, batch=0)
    assert sentence.split(":")[0].replace("<b>", "").replace("</b>", "") in widget.inner_text()


def _preempt_and_swap(page, widget, lang) -> None:
    """One click on "step" runs 10 more steps from the chapter's 100, in swap mode."""
    counters = _counters(widget, lang)
    text = counters.inner_text()
    assert _said(lang, T.STEP_N, step=100) + " " in text
    assert _said(lang, T.SWAPPED_OUT_BLOCKS) in text
    _changes_drawing(
        page, widget, _button(widget, lang, T.STEP).click, f"{lang}_preemption_explorer"
    )
    assert _said(lang, T.STEP_N, step=110) + " " in counters.inner_text()


def _send_cached_prefix(page, widget, lang) -> None:
    """One more click on "send" (the chapter's cell left "coder" chosen): the new request hits
    the blocks the last one cached, and the pool's picture changes."""
    _changes_drawing(page, widget, _button(widget, lang, T.SEND).click, f"{lang}_prefix_explorer")
    hits = re.escape(_said(lang, T.HITS, num=987, blocks="XYZ"))
    assert re.search(hits.replace("987", r"\d+").replace("XYZ", ".+"), widget.inner_text())


# Chapters whose cells take over 5 s show a bar (paged.progress); the test watches for it here.
SHOWS_PROGRESS = {"04_head_to_head.ipynb"}


# What a learner does with each chapter's widget, in the order the widgets appear.
INTERACTIONS = {
    "02_contiguous_allocation.ipynb": [_step_allocator],
    "03_paging.ipynb": [_append_token],
    "04_head_to_head.ipynb": [_drag_block_size],
    "08_sharing_and_names.ipynb": [_copy_on_write],
    "09_when_blocks_run_out.ipynb": [_preempt_and_swap],
    "12_prefix_caching.ipynb": [_send_cached_prefix],
}


def test_every_chapter_has_its_interactions_listed():
    """A chapter with a widget must say here what the browser test does with it."""
    for chapter in ENGLISH + [f"ko/{name}" for name in ENGLISH]:
        cells = json.loads((ROOT / "notebooks" / chapter).read_text())["cells"]
        chapter = Path(chapter).name  # both editions do the same
        has_widget = any(
            "application/vnd.jupyter.widget-view+json" in o.get("data", {})
            and o.get("metadata", {}).get("paged") != "progress"  # a bar (paged.progress)
            for c in cells
            for o in c.get("outputs", [])
        )
        assert has_widget == (chapter in INTERACTIONS), chapter


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_runs_in_jupyterlab(chapter, lab, browser):
    notebook = json.loads((ROOT / "notebooks" / chapter).read_text())
    code_cells = sum(c["cell_type"] == "code" for c in notebook["cells"])
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(UI_MS)
    problems = Problems(page, lab)
    stem = chapter.removesuffix(".ipynb").replace("/", "_")
    name, lang = Path(chapter).name, ("ko" if chapter.startswith("ko/") else "en")
    try:
        _open_and_run_all(page, lab, chapter)
        prompts, bar_seen = _wait_for_run_all(page, code_cells)
        saved = _save(page, lab.root / "notebooks" / chapter)

        # 1. Every code cell ran, and none raised (read back from what JupyterLab saved).
        errors = [
            f"cell {i}: {o['ename']}: {o['evalue']}"
            for i, c in enumerate(saved["cells"])
            for o in c.get("outputs", [])
            if o["output_type"] == "error"
        ]
        assert not errors, errors
        assert all(c["execution_count"] for c in saved["cells"] if c["cell_type"] == "code"), (
            f"not every cell ran: {prompts}"
        )

        # 2. Every widget the kernel displayed is rendered as a widget with a loaded picture.
        expected = sum(
            "application/vnd.jupyter.widget-view+json" in o.get("data", {})
            and o.get("metadata", {}).get("paged") != "progress"  # a bar, gone once done
            for c in saved["cells"]
            for o in c.get("outputs", [])
        )
        if name in SHOWS_PROGRESS:  # its long cells count what they have done while they run
            assert bar_seen, "no progress bar was seen while the chapter ran"
        widgets = _widget_outputs(page)
        assert expected == len(INTERACTIONS.get(name, [])), "widgets without an interaction"
        expect(widgets).to_have_count(expected, timeout=UI_MS)  # views render asynchronously
        for i in range(expected):
            expect(widgets.nth(i).locator("img")).not_to_have_count(0, timeout=UI_MS)
            for img in widgets.nth(i).locator("img").all():
                img.scroll_into_view_if_needed()
                try:
                    page.wait_for_function(
                        "img => img.complete && img.naturalWidth > 0", arg=img.element_handle()
                    )
                except PlaywrightTimeout:
                    pytest.fail(f"widget {i}: its picture never loaded")

        # 3. Nothing on the page looks like an error: no traceback, no failed widget, no dialog.
        for text in ("Traceback", "Error displaying widget", "Loading widget", "Kernel Error"):
            assert page.get_by_text(text).count() == 0, f"page shows {text!r}"
        assert page.locator(".jp-Dialog").count() == 0, "a dialog is open"

        # 4. The widgets react to a learner.
        for i, interact in enumerate(INTERACTIONS.get(name, [])):
            interact(page, widgets.nth(i), lang)

        # 5. The Korean edition speaks Korean: its checkers (every chapter but 0 has one) and
        #    its figures' Hangul (a font with Hangul is on the page's images: see the shots).
        if lang == "ko":
            assert page.get_by_text(re.compile("아직입니다")).count() > 0, "no Korean verdict"

        assert not problems.items, problems.items
    finally:
        _screenshot_whole_notebook(page, SHOTS / f"{stem}.png")
        context.close()
        try:  # free the kernel's memory for the next chapter
            for session in lab.api("sessions"):
                lab.api(f"sessions/{session['id']}", method="DELETE")
        except OSError as err:  # the server is gone: the failure above says why
            print(f"could not stop the kernel: {err}")


def _screenshot_whole_notebook(page, path: Path) -> None:
    """Grow the window to the notebook's height, so one picture shows the whole chapter."""
    try:
        scroller = page.locator(".jp-WindowedPanel-outer").first
        height = scroller.evaluate("e => { e.scrollTop = 0; return e.scrollHeight; }")
        page.set_viewport_size({"width": 1400, "height": min(height + 150, 16_000)})
        page.screenshot(path=path)
    except Exception as err:  # a screenshot must not hide the real failure
        print(f"screenshot {path.name} failed: {err}")


# Predictions (see test_notebooks_meta): what a collapsed answer must not show before it is run.
# JupyterLab's placeholder for a collapsed output shows the output's first non-empty line, so the
# revealing cells print a neutral line first; these are the answers that line must not give away.
PREDICTION_CHAPTERS = {
    "01_kv_cache_grows.ipynb": ["819,200", "800.0 KiB"],
    "ko/03_paging.ipynb": ["[8]", "[8, 11", "슬롯 17"],
}


def _cells_tagged(notebook: dict, tag: str) -> list[int]:
    return [i for i, c in enumerate(notebook["cells"]) if tag in c["metadata"].get("tags", [])]


@pytest.mark.parametrize("chapter", sorted(PREDICTION_CHAPTERS))
def test_predictions_open_collapsed_and_show_once_run(chapter, lab, browser):
    """A chapter opens with each prediction's answer collapsed (JupyterLab's output placeholder,
    `.jp-OutputPlaceholder`, in place of the output area) and its check cell's source hidden
    (`.jp-InputPlaceholder`); running the cell shows the answer: JupyterLab's CodeCell.execute
    sets outputHidden = false, so the learner needs no click."""
    notebook = json.loads((ROOT / "notebooks" / chapter).read_text())
    answers = _cells_tagged(notebook, "prediction-answer")
    checks = _cells_tagged(notebook, "prediction-check")
    assert answers and checks == [i + 1 for i in answers]
    code_cells = sum(c["cell_type"] == "code" for c in notebook["cells"])
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(UI_MS)
    problems = Problems(page, lab)
    stem = chapter.removesuffix(".ipynb").replace("/", "_")
    # The chapter as committed: an earlier test may have run and saved the lab's copy, and a
    # saved run keeps its outputs shown.
    shutil.copyfile(ROOT / "notebooks" / chapter, lab.root / "notebooks" / chapter)
    try:
        page.goto(f"{lab.url}/lab/tree/notebooks/{chapter}?token={lab.token}&reset")
        status = page.locator(".jp-StatusBar-Widget").get_by_text(re.compile(r"\| Idle$"))
        status.wait_for(timeout=STARTUP_S * 1000)
        cells = page.locator(".jp-Notebook .jp-Cell")
        expect(cells).to_have_count(len(notebook["cells"]))  # windowing off: every cell is there

        # 1. As opened: the answers collapsed, saying nothing of the answer; the checks hidden.
        for i in answers:
            placeholder = cells.nth(i).locator(".jp-OutputPlaceholder")
            expect(placeholder).to_have_count(1)
            expect(cells.nth(i).locator(".jp-OutputArea-output")).to_have_count(0)
            shown = placeholder.inner_text()
            said = [a for a in PREDICTION_CHAPTERS[chapter] if a in shown]
            assert not said, f"cell {i}: the collapsed output shows {said} ({shown!r})"
        for i in checks:
            placeholder = cells.nth(i).locator(".jp-InputPlaceholder")
            expect(placeholder).to_have_count(1)
            expect(cells.nth(i).locator(".jp-InputArea")).to_have_count(0)
            shown = placeholder.inner_text().strip()  # the source's first line: a comment
            assert shown.startswith("#"), f"cell {i}: the hidden source shows {shown!r}"
        first = cells.nth(answers[0])
        first.scroll_into_view_if_needed()
        question = cells.nth(answers[0] - 1).bounding_box()
        check = cells.nth(answers[0] + 1).bounding_box()
        page.screenshot(
            path=SHOTS / f"{stem}_prediction_collapsed.png",
            clip={
                "x": question["x"],
                "y": question["y"],
                "width": question["width"],
                "height": check["y"] + check["height"] - question["y"],
            },
        )

        # 2. Run: every answer shows its output, the checks ran (silently) and stay hidden.
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        prompts, bar_seen = _wait_for_run_all(page, code_cells)
        numbered = [p for p in prompts if re.fullmatch(r"\[\d+\]:", p.strip())]
        hidden = [
            c for c in notebook["cells"] if c["metadata"].get("jupyter", {}).get("source_hidden")
        ]
        assert len(numbered) == code_cells - len(hidden), f"not every cell ran: {prompts}"
        saved = _save(page, lab.root / "notebooks" / chapter)
        ran = [c["execution_count"] for c in saved["cells"] if c["cell_type"] == "code"]
        assert all(ran), f"not every cell ran: {ran}"
        assert page.get_by_text("Traceback").count() == 0, "a cell raised"
        for i in answers:
            expect(cells.nth(i).locator(".jp-OutputPlaceholder")).to_have_count(0)
            expect(cells.nth(i).locator(".jp-OutputArea-output").first).to_be_visible()
        shown = " ".join(cells.nth(i).locator(".jp-OutputArea").inner_text() for i in answers)
        assert any(a in shown for a in PREDICTION_CHAPTERS[chapter]), shown
        for i in checks:
            expect(cells.nth(i).locator(".jp-InputPlaceholder")).to_have_count(1)
            expect(cells.nth(i).locator(".jp-OutputArea-output")).to_have_count(0)
        first.scroll_into_view_if_needed()
        first.screenshot(path=SHOTS / f"{stem}_prediction_run.png")
        assert not problems.items, problems.items
    finally:
        context.close()
        try:
            for session in lab.api("sessions"):
                lab.api(f"sessions/{session['id']}", method="DELETE")
        except OSError as err:
            print(f"could not stop the kernel: {err}")
