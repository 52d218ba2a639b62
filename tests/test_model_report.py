"""paged.model.report: the environment line, batch over time, first admissions, the oracle.

Without the real weights: the helpers on scheduler traces and a stand-in model. With them
(skipped when the weights or the `model` extra are missing, unless PAGED_REQUIRE_MODEL=1): the
first admission it predicts is the one `generate` makes (transformers' oracle, loaded as chapter
10 loads it, is tested in test_model.py, where that model is loaded once for all its tests).
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from types import SimpleNamespace

import pytest
import torch
from model_needs import need

import paged.model as pm
from paged.model import report
from paged.model.generate import GenerateResult
from paged.scheduler import Scheduler
from paged.workloads import Request


def _result(trace, decode_seconds) -> GenerateResult:
    """A GenerateResult around a simulated trace: only the fields the helpers read matter."""
    return GenerateResult(
        tokens=[[1]],
        texts=[""],
        prompt_lens=[1],
        policy="paged",
        kv_slots=1,
        block_size=16,
        peak_batch=0,
        steps=len(trace),
        preemptions=0,
        recomputed_tokens=0,
        seconds=1.0,
        decode_seconds=tuple(decode_seconds),
        attention="",
        device="cpu",
        trace=tuple(trace),
    )


def test_environment_names_machine_versions_and_threads():
    need("gguf", "transformers")
    import transformers

    line = report.environment(SimpleNamespace(device=torch.device("cpu")))
    assert f"torch {torch.__version__} ({torch.get_num_threads()} threads)" in line
    assert f"transformers {transformers.__version__}" in line and "gguf " in line
    assert f"Python {platform.python_version()}" in line and "cores" in line
    assert report.peak_memory_gib() > 0


def test_batch_over_time_and_mean_batch_read_the_trace():
    requests = [Request(i, prompt_len=20, output_len=n) for i, n in enumerate((3, 5, 8))]
    trace = Scheduler(requests, "paged", kv_slots=256, block_size=16, watermark=0.0).run()
    result = _result(trace, [(3, 0.1), (3, 0.1), (2, 0.1), (1, 0.1)])
    assert report.batch_over_time(result) == [s.num_running for s in trace]
    assert report.batch_over_time(result)[0] == 3 and report.batch_over_time(result)[-1] == 0
    assert report.mean_batch(result) == pytest.approx(9 / 4)
    assert report.mean_batch(_result(trace, [])) == 0.0


def test_decode_ms_by_batch_takes_the_median_over_runs():
    one = _result([], [(3, 0.010), (3, 0.030), (1, 0.004)])
    two = _result([], [(3, 0.020), (2, 0.008)])
    assert report.decode_ms_by_batch(one, two) == pytest.approx({1: 4.0, 2: 8.0, 3: 20.0})
    assert list(report.decode_ms_by_batch(two, one)) == [1, 2, 3]  # by batch size
    assert report.decode_ms_by_batch(_result([], [])) == {}


def test_admitted_at_start_applies_each_policys_admission():
    prompt_lens = [40, 35, 70, 38]  # blocks of 16: 3, 3, 5, 3
    assert report.admitted_at_start(prompt_lens, 200, 20 * 16, "paged") == 4  # prompts only
    assert (
        report.admitted_at_start(prompt_lens, 200, 20 * 16, "max_new_tokens") == 1
    )  # 240 + 235 > 320
    assert report.admitted_at_start(prompt_lens, 8, 20 * 16, "max_new_tokens") == 4
    assert report.admitted_at_start(prompt_lens, 8, 11 * 16, "paged") == 3  # 3 + 3 + 5 = 11
    assert report.admitted_at_start(prompt_lens, 8, 10 * 16, "paged") == 2  # FCFS: stops at 70
    assert report.admitted_at_start(prompt_lens, 8, 4 * 32, "paged", block_size=32) == 2
    with pytest.raises(ValueError, match="'pow2'"):
        report.admitted_at_start(prompt_lens, 8, 320, "pow2")
    with pytest.raises(ValueError, match="prompt_lens"):
        report.admitted_at_start([], 8, 320)
    with pytest.raises(ValueError, match="request 2"):  # a request the pool cannot ever hold
        report.admitted_at_start(prompt_lens, 8, 64, "paged")


PROMPTS = [
    "What is the capital of France?",
    "Name a colour.",
    "Count from one to five.",
    "Say hello.",
    "Write one word about rain.",
    "What is 2 + 2?",
]


def test_admitted_at_start_predicts_generates_first_step(model):
    lens = [len(p) for p in pm.prompt_ids(model, PROMPTS)]
    budget = 3 * (max(lens) + 4)
    for policy in ("max_new_tokens", "paged"):
        run = pm.generate(model, PROMPTS, 4, kv_slots=budget, policy=policy)
        assert report.admitted_at_start(lens, 4, budget, policy) == len(run.trace[0].admitted)


@pytest.mark.parametrize(("value", "says"), [(None, "default"), ("1", "1"), ("0", "error")])
def test_only_the_runners_pin_torchs_threads(value, says):
    """A learner's machine keeps torch's default threads; PAGED_NUM_THREADS (set by the test and
    notebook runners) pins them, and a bad value is named."""
    env = {k: v for k, v in os.environ.items() if k != "PAGED_NUM_THREADS"}
    if value is not None:
        env["PAGED_NUM_THREADS"] = value
    code = (
        "import torch; d = torch.get_num_threads(); import paged.model; "
        "print('default' if torch.get_num_threads() == d else torch.get_num_threads())"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if says == "error":
        assert done.returncode != 0 and "PAGED_NUM_THREADS='0'" in done.stderr
    else:
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip() == says
