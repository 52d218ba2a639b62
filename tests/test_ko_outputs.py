"""The Korean edition speaks Korean in what its code prints, not only in its prose.

Every text output stored in a Korean chapter (streams, plain-text results, errors) is scanned for
English words. Allowed: identifiers (anything with `_`, a digit or a dot in or next to it,
CamelCase, text in backticks or quotes), units, the evidence labels, the names in NAMES (the
paper, models, datasets, software, hardware), the library's own names for what a learner passes
(the allocation policies and placements, the model presets, the exercises' functions). Lines that
are English by nature (the model's own answers, Triton's own messages) are listed in ENGLISH_LINES
with the reason. Korean messages are also checked for particle templates such as 을(를): a sentence is
reworded so that no particle depends on a value filled in at run time.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from paged import exercises
from paged.contiguous import PLACEMENTS
from paged.kv import PRESETS
from paged.scheduler_options import SIM_POLICIES

ROOT = Path(__file__).resolve().parents[1]
KO = sorted((ROOT / "notebooks" / "ko").glob("[0-9][0-9]_*.ipynb"))

LABELS = {"PAPER", "DOCS", "MEASURED", "SIMULATED", "ASSUMPTION", "ARITHMETIC"}
UNITS = {"KiB", "MiB", "GiB", "GB", "TB", "MB", "kB", "bytes", "µs", "ms", "s"}
NAMES = set(
    # the paper and its systems, datasets, models
    "Kwon et al SOSP arXiv Fig vLLM Orca Max Oracle ShareGPT Alpaca OPT Llama LLaMA SmolLM GPT "
    # software, hardware, devices (vLLM's class names are its own)
    "PyTorch Triton CUDA GPU CPU SDPA NVIDIA Tesla HBM Colab Python Linux Intel Xeon Processor "
    "python torch triton transformers gguf GGUF cpu cuda Noto Sans CJK Debian Ubuntu JupyterLab "
    "Jupyter PCIe Scheduler paged "
    # terms the Korean chapters keep in English, as the glossary does
    "KV GQA FCFS fork prefill decode batch BLOCK lse tl "
    # Python's own values
    "True False None nan inf NaN".split()
)
# What a learner types: the functions they write (a verdict starts with the name), the policies
# and placements they pass, the model presets by name.
API = {
    *(name.removeprefix("check_") for name in exercises.__all__),
    *SIM_POLICIES,
    *PLACEMENTS,
    *(word for spec in PRESETS.values() for word in re.findall(r"[A-Za-z]+", spec.name)),
}
# (chapter, cell id) -> (why, a pattern of the lines that may be English)
ENGLISH_LINES = {
    ("06", "c06-one-d-mask-says"): ("Triton's own error message", r"^ValueError\("),
    ("06", "c06-constexpr"): ("Triton's own error message", r"^오류: arange's "),
    ("06", "c06-device-print"): (
        "the kernel's tl.device_print label",
        r"^\(\d+, \d+, \d+\)  offs < n:",
    ),
    ("10", "r10b0002"): ("the model's own answer", r"^The sky is blue"),
    ("11", "r11b0003"): ("the model's own answer", r"^vLLM의 3번 답: The sky is blue"),
}
WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
IDENT_AROUND = re.compile(r"[\w./=<]")


def text_outputs(cell: dict):
    for out in cell.get("outputs", []):
        if out["output_type"] == "stream":
            yield "".join(out["text"])
        elif out["output_type"] == "error":
            yield f"{out['ename']}: {out['evalue']}"
        else:
            data = out.get("data", {})
            if "text/plain" in data and not {"image/png", "text/html"} & set(data):
                if "application/vnd.jupyter.widget-view+json" not in data:
                    yield "".join(data["text/plain"])


def strip_code(line: str) -> str:
    """The line without what is code: backticks, quoted strings, dotted paths."""
    line = re.sub(r"`[^`]*`", " ", line)
    line = re.sub(r"[A-Za-z_][\w.]*\([^()]*\)", " ", line)  # a call: print(source), generate()
    line = re.sub(r"(?<![A-Za-z])'[^']*'(?![A-Za-z])|\"[^\"]*\"|‘[^’]*’|“[^”]*”", " ", line)
    return line


def english_words(text: str) -> list[str]:
    found = []
    for line in text.splitlines():
        line = strip_code(line)
        for m in WORD.finditer(line):
            word = m.group().strip("'’-")
            before = line[m.start() - 1] if m.start() else " "
            after = line[m.end()] if m.end() < len(line) else " "
            if IDENT_AROUND.match(before) or re.match(r"[\w(\[=]|\.\w|\s*=", line[m.end() :]):
                continue  # part of an identifier, a call, a path, a name printed as `name =`
            if after == "_" or any(ch.isdigit() for ch in word):
                continue
            if word in LABELS | UNITS | NAMES | API or len(word) < 2:
                continue
            if re.search(r"[a-z][A-Z]", word) or word.isupper() and len(word) <= 5:
                continue  # CamelCase class names, short acronyms
            found.append(word)
    return found


@pytest.mark.parametrize("path", KO, ids=lambda p: p.name[:2])
def test_korean_chapters_print_no_english_words(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    problems = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        _, english = ENGLISH_LINES.get((path.name[:2], cell.get("id")), ("", r"(?!)"))
        for text in text_outputs(cell):
            for line in text.splitlines():
                words = [] if re.search(english, line) else english_words(line)
                if words:
                    problems.append(
                        f"cell {i} ({cell.get('id')}): {sorted(set(words))}: {line[:90]}"
                    )
    assert not problems, f"{path.name} prints English:\n" + "\n".join(problems)


def test_the_scanner_finds_english_and_lets_names_and_identifiers_pass():
    assert english_words("Alpaca-like   샘플 4개") == ["Alpaca-like"]
    assert english_words("slot: 아직입니다. first_fit: 정답입니다") == []
    assert english_words("score, flat (scale 1)") == ["score", "flat", "scale"]
    assert english_words("vLLM 0.32.0: 블록 32개, SIMULATED, 819,200 bytes, 1.5 GiB") == []
    assert english_words("gather_kv, decode_attention_ref, torch.float32, `make lab`") == []
    assert english_words("KVCacheBlock의 필드: block_id, ref_cnt") == []
    assert english_words("sums  = tensor([1.0]), tl.exp(x): tensor([2.0])") == []


PARTICLE_TEMPLATE = re.compile(r"[\w}]\((을|를|이|가|은|는|와|과|으로|로)\)")
FILLED_PARTICLE = re.compile(r"\}(이|가|을|를|은|는|와|과)(?=[\s,.:)\"]|$)")


def test_no_particle_templates_in_korean_text():
    hits = []
    for path in [*ROOT.joinpath("paged").rglob("*.py"), *KO]:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if PARTICLE_TEMPLATE.search(line) or FILLED_PARTICLE.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:100]}")
    assert not hits, "a particle that depends on a filled-in value:\n" + "\n".join(hits)


# Words a Korean message may keep in English, beyond the scanner's: code and math as written.
MESSAGE_WORDS = {
    "id",  # a block's id, as the allocator's API says it
    "vs",  # "SIMULATED vs PAPER" in figure titles, as the paper's figures read
    "softmax",  # the function's name, as the chapters write it
    "load",  # Triton's load/store, kept in English (the glossary's rule)
    "store",
    "pos",  # a kernel variable in a written-out condition, `pos < seq_len`
    "flex",  # the FlexAttention baseline's column name in the benchmark
}
GLOSS = re.compile(r"(?<=[\uac00-\ud7a3])\([A-Za-z][A-Za-z -]*\)")  # 최초 적합(first fit)


def _catalogue():
    """Every Message held by a module of `paged` (module constants, and those in its tables)."""
    import importlib
    import pkgutil

    import paged
    from paged.text import Message

    found = {}

    def walk(obj, where, depth=0):
        if isinstance(obj, Message):
            found.setdefault(obj, where)
        elif depth < 2 and isinstance(obj, dict):
            for key, value in obj.items():
                walk(key, where, depth + 1)
                walk(value, where, depth + 1)
        elif depth < 2 and isinstance(obj, (tuple, list)):
            for value in obj:
                walk(value, where, depth + 1)

    for info in pkgutil.walk_packages(paged.__path__, "paged."):
        if info.name.endswith(("__main__", "vllm_child")):  # scripts: importing runs them
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:
            if info.name.startswith("paged.model"):  # the `model` extra is not installed
                continue
            raise
        for name, obj in vars(module).items():
            walk(obj, f"{info.name}.{name}")
    return found


def test_korean_messages_hold_no_english_words():
    """What the library prints or draws (figure titles, axis labels, legends, hints, verdicts)
    comes from the catalogue: its Korean texts are scanned as the chapters' outputs are."""
    catalogue = _catalogue()
    assert len(catalogue) > 400  # every module's messages were found
    problems = []
    for message, where in catalogue.items():
        text = GLOSS.sub(" ", re.sub(r"\{[^{}]*\}", " ", message.ko))
        words = [w for w in english_words(text) if w not in MESSAGE_WORDS]
        if words:
            problems.append(f"{where}: {sorted(set(words))}: {message.ko[:80]}")
    assert not problems, "Korean messages with English words:\n" + "\n".join(problems)
