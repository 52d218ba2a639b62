"""What runtime a chapter runs in, and what the learner should change before the kernel chapters.

`Runtime.detect()` reads whether this is Google Colab and which CUDA GPU, if any, is here (its
name and compute capability). `runtime_hint` turns that into one sentence in the edition's
language, or None when all is well: a Colab runtime without a GPU should switch to a T4 (the
Triton kernels of chapters 6 and 7 would crawl under the CPU interpreter); a GPU below sm_80 has
no bf16 tensor cores, so the kernel takes fp16 there. A local machine without a GPU needs
nothing: the kernels run under Triton's interpreter, as chapter 0 says. Chapters 0 and 7 print
the hint (they import it through `colab`, where it used to live).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from ..text import msg


@dataclass(frozen=True)
class Runtime:
    """Where the notebook runs: in Colab or not; the GPU's name and compute capability, if any."""

    colab: bool
    gpu: str | None = None
    capability: tuple[int, int] | None = None

    @classmethod
    def detect(cls) -> Runtime:
        import torch

        colab = "google.colab" in sys.modules
        if not torch.cuda.is_available():
            return cls(colab)
        return cls(colab, torch.cuda.get_device_name(), tuple(torch.cuda.get_device_capability()))


def runtime_hint(runtime: Runtime | None = None) -> str | None:
    """What a learner should change before the kernel chapter, or None when all is well."""
    rt = runtime or Runtime.detect()
    if rt.gpu is None:
        if not rt.colab:
            return None  # local CPU: the kernel runs under Triton's interpreter, as chapter 0 says
        return str(
            msg(
                "This Colab runtime has no GPU, so the Triton kernels of chapters 6 and 7 would crawl "
                "under the CPU interpreter. Choose Runtime → Change runtime type → T4 GPU → Save, "
                "then run the notebook again from the top.",
                "이 Colab 런타임에는 GPU가 없어서 6장과 7장의 Triton 커널이 CPU "
                "인터프리터에서 아주 느리게 돕니다. 런타임 > 런타임 유형 변경 > 하드웨어 가속기에서 "
                "T4 GPU를 고르고 저장한 뒤, 노트북을 처음부터 다시 실행하세요.",
            )
        )
    major, minor = rt.capability
    if major < 8:
        return msg(
            "{gpu} (sm_{major}{minor}) has no bf16 tensor cores: use fp16 (dtype=torch.float16), "
            "not bf16, for the kernel.",
            "{gpu} (sm_{major}{minor})에는 bf16 텐서 코어가 없습니다. 커널에는 bf16이 아니라 "
            "fp16(dtype=torch.float16)을 쓰세요.",
        ).format(gpu=rt.gpu, major=major, minor=minor)
    return None


__all__ = ["Runtime", "runtime_hint"]
