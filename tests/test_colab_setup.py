"""The Colab setup cell, for real: it installs the course, only the course, and the chapter runs.

PAGED_COLAB_VENV names a virtual environment pinned like Colab (ipywidgets 7.7, Triton 3.5,
matplotlib 3.10, NumPy 2.0, Jupyter) that lacks the course: `make colab-venv` builds it and
`.ci/run` sets it, so CI runs this test; elsewhere it skips. The test makes a child environment
that sees those packages as Colab's own (a .pth line, like Colab's dist-packages), stubs
`google.colab`, points PAGED_INSTALL_SOURCE at a copy of this checkout (no network needed for the
course itself), and runs a chapter in a Jupyter kernel: its setup cell first, then every cell.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from paged.course import colab as course
from paged.viz import fonts

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "notebooks" / "03_paging.ipynb"  # block tables, a drawing and a widget

_VERSIONS = """
import importlib.metadata as md, importlib.util, json, re
names = {re.sub(r"[-_.]+", "-", d.metadata["Name"]).lower(): d.version for d in md.distributions()}
print(json.dumps({"dists": names,
                  "paged": importlib.util.find_spec("paged") is not None}))
"""

_DRIVER = """
import json, sys
import nbformat
from nbclient import NotebookClient

nb = nbformat.read(sys.argv[1], as_version=4)
# Colab imports google.colab before any cell runs; and the course must not be there yet.
nb.cells.insert(1, nbformat.v4.new_code_cell(
    "import google.colab, importlib.util\\nassert importlib.util.find_spec('paged') is None"))
NotebookClient(nb, timeout=600, kernel_name="colab-like",
               resources={"metadata": {"path": sys.argv[2]}}).execute()
setup = nb.cells[2]
print(json.dumps({"setup_outputs": setup.outputs, "cells": len(nb.cells)}))
"""


def _python_json(python: Path, code: str, env: dict, cwd: Path) -> dict:
    done = subprocess.run(
        [str(python), "-c", code], capture_output=True, text=True, env=env, cwd=cwd, timeout=900
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def colab_python() -> Path:
    where = os.environ.get("PAGED_COLAB_VENV")
    if not where:
        pytest.skip("set PAGED_COLAB_VENV to a Colab-like venv (make colab-venv) to run this test")
    python = Path(where).resolve() / "bin" / "python"
    assert python.exists(), f"PAGED_COLAB_VENV={where} has no bin/python: run make colab-venv"
    return python


@pytest.fixture(scope="module")
def runtime(colab_python, tmp_path_factory):
    """A child venv over the Colab-like one, a google.colab stub, a fake apt-get, a copy of us."""
    tmp = tmp_path_factory.mktemp("colab")
    child = tmp / "venv"
    subprocess.run([str(colab_python), "-m", "venv", "--without-pip", str(child)], check=True)
    python = child / "bin" / "python"
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    parent_lib, child_lib = (
        subprocess.run(
            [str(p), "-c", purelib], capture_output=True, text=True, check=True
        ).stdout.strip()
        for p in (colab_python, python)
    )
    (Path(child_lib) / "colab.pth").write_text(f"import site; site.addsitedir({parent_lib!r})\n")
    (tmp / "stub" / "google" / "colab").mkdir(parents=True)  # google stays a namespace package
    (tmp / "stub" / "google" / "colab" / "__init__.py").write_text('"""Stand-in for Colab."""\n')
    (tmp / "bin").mkdir()
    apt_log = tmp / "apt-get.log"
    (tmp / "bin" / "apt-get").write_text(f'#!/bin/sh\necho "$@" >> {apt_log}\nexit 1\n')
    (tmp / "bin" / "apt-get").chmod(0o755)
    source = _mkdir(tmp / "checkout")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(
        ROOT / "paged", source / "paged", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
    )
    kernel = tmp / "jupyter" / "kernels" / "colab-like"
    kernel.mkdir(parents=True)
    (kernel / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Colab-like",
                "language": "python",
            }
        )
    )
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PAGED_", "PYTHON", "VIRTUAL_ENV", "JUPYTER"))
    }
    env.update(
        PYTHONPATH=str(tmp / "stub"),
        PAGED_INSTALL_SOURCE=str(source),
        PATH=f"{tmp / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        MPLBACKEND="Agg",
        JUPYTER_PATH=str(tmp / "jupyter"),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    work = _mkdir(tmp / "work")  # the kernel's cwd: not this checkout, so `import paged` must fail
    return {
        "python": python,
        "lib": Path(child_lib),
        "env": env,
        "work": work,
        "source": source,
        "apt_log": apt_log,
    }


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def test_setup_cell_installs_only_the_course_and_the_chapter_runs(runtime):
    py, env, work = runtime["python"], runtime["env"], runtime["work"]
    cells = json.loads(CHAPTER.read_text())["cells"]
    assert "".join(cells[1]["source"]) == course.setup_cell()  # the committed cell is tested
    before = _python_json(py, _VERSIONS, env, work)
    assert not before["paged"] and {"torch", "ipywidgets", "jupyter-server"} <= set(before["dists"])
    lib_before = {p.name for p in runtime["lib"].iterdir()}

    driver = work / "driver.py"
    driver.write_text(_DRIVER)
    done = subprocess.run(
        [str(py), str(driver), str(CHAPTER), str(work)],
        capture_output=True,
        text=True,
        env=env,
        cwd=work,
        timeout=1200,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-6000:]
    ran = json.loads(done.stdout.strip().splitlines()[-1])

    # Quiet on success: one line on stdout says what it did; nothing on stderr.
    outputs = ran["setup_outputs"]
    assert [(o["output_type"], o.get("name")) for o in outputs] == [("stream", "stdout")], outputs
    said = outputs[0]["text"]
    assert said.count("\n") == 1
    assert said.startswith(f"Installed the course from {runtime['source']};")
    assert f"torch {before['dists']['torch']}" in said
    assert f"ipywidgets {before['dists']['ipywidgets']}" in said

    # Only the course arrived; every package Colab had keeps its version; nothing else came.
    after = _python_json(py, _VERSIONS, env, work)
    assert after["paged"]
    assert {k: v for k, v in after["dists"].items() if k != "paged"} == before["dists"]
    added = {p.name for p in runtime["lib"].iterdir()} - lib_before
    assert {n.split("-")[0].split(".")[0] for n in added} == {"paged"}, added
    where = subprocess.run(
        [str(py), "-c", "import paged; print(paged.__file__)"],
        env=env,
        cwd=work,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert Path(where.strip()).is_relative_to(runtime["lib"])

    # A Korean font: apt-get ran only if none was installed.
    font = fonts.find_cjk_font()
    log = runtime["apt_log"].read_text() if runtime["apt_log"].exists() else ""
    if font is None:
        assert "install -y -qq fonts-nanum" in log and "Hangul in figures: no font found" in said
    else:
        assert log == "" and f"Hangul in figures: {fonts.use_cjk_font()}" in said


def test_setup_cell_names_a_missing_package(runtime):
    """Were Colab to drop a package the course needs, the cell says which and what to do."""
    broken = runtime["work"] / "broken"
    (broken / "ipywidgets").mkdir(parents=True, exist_ok=True)
    (broken / "ipywidgets" / "__init__.py").write_text("raise ImportError('gone')\n")
    env = runtime["env"] | {"PYTHONPATH": f"{broken}{os.pathsep}{runtime['env']['PYTHONPATH']}"}
    code = f"import google.colab\nexec({course.setup_cell()!r})"
    done = subprocess.run(
        [str(runtime["python"]), "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=runtime["work"],
        timeout=600,
    )
    assert done.returncode != 0
    assert "The course needs ipywidgets" in done.stderr and "%pip install ipywidgets" in done.stderr
