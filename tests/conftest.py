"""Shared pytest set-up: markers used across the test files, the real model's fixtures, and the
English edition for the tests that read verdicts. No test keeps an answer in a learner's
workspace: PAGED_WORKSPACE is "off" for the tests and every kernel they start (nbval's, the
browser's JupyterLab), unless a test points it at a temporary folder itself."""

import os

import pytest


def pytest_configure(config):
    os.environ["PAGED_WORKSPACE"] = "off"
    config.addinivalue_line(
        "markers", "slow: executes whole chapters (minutes); deselect with -m 'not slow'"
    )


# Files whose cases each run for a minute or so on their own (a chapter in JupyterLab, a live
# vLLM run): under `--dist loadfile` each such case may go to either worker.
SPREAD_FILES = ("test_browser.py", "test_vllm.py")


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: called only where it runs
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile` (the Makefile's) but for the cases of SPREAD_FILES: a test file's
    tests, or a notebook's cells, still run on one worker in order (they share a module's
    fixtures, or a kernel), while each parametrized case of those files goes to whichever
    worker is free, instead of one worker running them all in turn."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class Spread(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            file, _, test = nodeid.partition("::")
            if file.endswith(SPREAD_FILES) and "[" in test:
                return nodeid  # one case
            return file

    return Spread(config, log)


@pytest.fixture
def english(monkeypatch):
    """The English edition's messages (a test may switch to Korean): the exercise tests read
    verdicts word for word (`pytestmark = pytest.mark.usefixtures("english")`)."""
    monkeypatch.delenv("PAGED_LANG", raising=False)


@pytest.fixture
def verdict(capsys):
    """Run a checker: `verdict(check, fn, **options)` is (what it returned, what it printed),
    seed 7 unless another is given."""

    def run(check, fn, **options):
        ok = check(fn, **{"seed": 7, **options})
        return ok, capsys.readouterr().out

    return run


@pytest.fixture(scope="module")
def one_thread():
    """One torch thread while a module's tests run: two threads on two shared, busy cores wait on
    each other in every small operation (several times slower); the tests check tokens, not
    speed."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def model(one_thread):
    """SmolLM2 on the CPU, loaded once per module (skipped without it; failed under
    PAGED_REQUIRE_MODEL=1)."""
    from model_needs import need

    import paged.model as pm

    need("gguf", "transformers", weights=True)
    return pm.load(device="cpu")
