"""environment.yml must list exactly the dependencies of pyproject.toml (conda cannot run here)."""

import re
from pathlib import Path

import tomllib
import yaml

ROOT = Path(__file__).resolve().parents[1]
CONDA_NAMES = {"pytorch": "torch"}  # conda-forge name -> PyPI name


def _split(spec: str) -> tuple[str, str]:
    spec = spec.split(";")[0].split("#")[0].replace(" ", "")
    name, version = re.match(r"([A-Za-z0-9_.\-]+)(.*)", spec).groups()
    return CONDA_NAMES.get(name.lower(), name.lower()), version


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = dict(
        _split(s) for s in project["dependencies"] + project["optional-dependencies"]["dev"]
    )
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    pip_section = [d for d in env["dependencies"] if isinstance(d, dict)]
    listed = dict(_split(s) for s in conda if not s.startswith(("python", "pip")))
    assert listed == wanted
    assert "conda-forge" in env["channels"]
    assert pip_section == [{"pip": ["-e ."]}]


def test_ci_calls_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    assert "make test" in readme and "make lab" in readme
    assert "make test" in (ROOT / ".ci" / "run").read_text()
