"""The Korean edition's terminology: one Korean term per concept, and the variants it replaces.

The guide's own terms win (조절점, 내부/외부 단편화, 논리/물리 블록, 블록 테이블). Code names
(`fork`, `block_size`) stay as code. `tests/test_editions.py` fails when a Korean chapter or a
Korean message uses a variant below; the README's glossary shows `TERMS`.
"""

from __future__ import annotations

import re

# English term -> the one Korean term the course uses for it.
TERMS = {
    "KV cache": "KV 캐시",
    "logical block": "논리 블록",
    "physical block": "물리 블록",
    "block table": "블록 테이블",
    "slot mapping": "슬롯 매핑",
    "internal fragmentation": "내부 단편화",
    "external fragmentation": "외부 단편화",
    "reservation": "예약",
    "ref count": "참조 카운트",
    "copy-on-write": "쓰기 시 복사",
    "preemption": "선점",
    "eviction": "축출",
    "allocator": "할당자",
    "checker": "채점기",
    "step": "단계",
    "batch": "배치",
    "placement": "위치 선정",
    "reference implementation": "참조 구현",
    "end-to-end": "종단 간",
    "knob (trade-off dial)": "조절점",
    "baseline": "기준선",
    "running max (online softmax)": "지금까지의 최댓값",
    "you (the learner)": "여러분",
    "the course (this one), the course's": "코스, 코스의",
    "piece (of the learner's engine)": "부품",
    "workspace (where answers are kept)": "작업 공간",
    "admission (admit)": "수락",
    "prefix caching": "접두사 캐싱",
    "swapping": "스와핑 (방향은 스왑 아웃 / 스왑 인)",
    "round up (Pow2)": "올림",
    "arena": "아레나",
    "first fit": "최초 적합",
    "buddy allocator": "버디 할당자",
    "slot": "슬롯",
    "load / store (Triton)": "load / store (`tl.load`, `tl.store`의 이름 그대로)",
    "null block (vLLM's block 0)": "널 블록",
    "free list / free queue": "빈 블록 큐",
    "prefill": "prefill (영어 그대로)",
    "schedule (noun)": "스케줄",
    "greedy": "탐욕적",
    "memory map": "메모리 지도",
    "open exercise": "열린 문제",
    "recording (of a vLLM run)": "기록본",
    "live (run now, here)": "직접 실행",
    "count (how many)": "개수 (횟수 is how many times)",
    "percent": "N % (a space before %, as the edition writes it)",
    "Colab's menu": "런타임 > 런타임 유형 변경 > 하드웨어 가속기 (English in parentheses)",
    "continuous batching": "연속 배칭",
    "chunked prefill": "청크 단위 prefill",
    "token budget (max_num_batched_tokens)": "토큰 예산",
    "hit / miss (prefix cache)": "적중 / 적중 실패",
    "salt (cache_salt)": "솔트",
    "tenant": "테넌트",
    "hash chain": "해시 사슬",
    "time to first token": "첫 토큰까지 걸린 시간",
    "the free queue's ends": "앞쪽 / 꼬리",
    "a block's label (whose block it was)": "이름표",
}

# English terms that have a Korean term above: bare in Korean text, they are variants.
_EN = r"(?:prefix\s+caching|null\s+block|buddy|first[\s-]fit)"

# A variant -> what to write instead. Regular expressions, matched outside `code spans`.
FORBIDDEN = {
    r"할당기": "할당자",
    r"검사기": "채점기",
    r"체커": "채점기",
    r"스텝": "단계",
    r"당신": "여러분",
    r"과정의 (?=엔진|것|라이브러리|모델|규칙|부품|스케줄러|페이징|디코드|실행)": "코스의 (the course's)",
    r"포크": "fork",
    r"레퍼런스": "참조 구현",
    r"엔드투엔드": "종단 간",
    r"조절 ?손잡이": "조절점",
    r"다이얼": "조절점",
    r"베이스라인": "기준선",
    r"내보내": "축출",
    r"배치\(placement\)": "위치 선정(placement)",
    r"실행 (?:최댓값|최대값|합|max|state|상태)": "지금까지의 최댓값 / 누적 합 / 누적 상태",
    r"\d(?:\.\d+)?× ?(?=[가-힣])": "N배 (× only between numbers)",
    r"받아들이기|받아들임": "수락",
    r"프리픽스": "접두사",
    r"출력(?:을|만) 반올림|반올림한 출력": "올림 (Pow2 rounds the output up)",
    r"(?<=[\d}])칸": "슬롯",
    r"버디(?! 할당자)": "버디 할당자",
    r"(?:마스크 없는|마스크하지 않은|[KVQ]|그) 로드|스토어": "load / store (Triton's names)",
    r"누적\s+최댓값": "지금까지의 최댓값",
    r"프리필": "prefill",
    r"연속\s+할당\s+영역": "아레나",
    r"그리디": "탐욕적",
    r"메모리\s+맵": "메모리 지도",
    r"일정(?![한하함히])": "스케줄 (일정한/일정하다 mean constant)",
    r"빈\s+블록\s+목록": "빈 블록 큐",
    r"스스로\s+답을\s+찾(?:아가)?는\s+문제": "열린 문제",
    r"실시간": "직접 실행 (실시간 means real-time)",
    r"녹화본": "기록본",
    r"[\d}]코어": "코어 N개",
    r"의 답 (?:\{\w+\}|\d+)": "의 N번 답",
    r"MEASURED\s+\(?횟수": "MEASURED 개수 (counts of things)",
    r"(?<=[\d}])%(?!p)(?! ?[A-Za-z\"'”])": "N % (a space before %)",
    # English terms the edition has Korean for, left bare in Korean text: not a gloss "(term)",
    # not inside an English quotation (a word before or after it)
    rf"(?<![A-Za-z]\s)(?<![(\w]){_EN}(?!\s[A-Za-z])|(?<=\(){_EN}(?!\)|[\s-]?[A-Za-z])": (
        "접두사 캐싱 / 널 블록 / 버디 할당자 / 최초 적합"
    ),
    r"꼬리표": "이름표 (a block's label)",
    r"(?:큐|큐의|목록의)\s*(?:\*\*)?(?:뒤쪽|맨 뒤|끝)(?=[에으로의])": "꼬리 (the free queue's tail; its head is 앞쪽)",
    r"첫 실패": "첫 적중 실패",
    r"(?<!논리 )(?<!물리 )블록 번호": "블록 id (a physical block) / 논리 블록 번호 (a table index)",
    r"접두부": "접두사",
    r"증거 메모": "증거 노트",
    r"(?<![A-Za-z`|]\s)(?<![(\w`])chunked\s+prefill(?!\s[A-Za-z])": "청크 단위 prefill",
    r"\(free list\)으로": "(free list)로",
    r"13[45](?:\.\d)?\s?M개": "1억 3,450만 개 (SmolLM2's parameters, written one way)",
    r"(?<!\()(?<!\(\*)Runtime\s+[→>]\s+Change\s+runtime\s+type": (
        "런타임 > 런타임 유형 변경 > 하드웨어 가속기 (Runtime → Change runtime type → "
        "Hardware accelerator)"
    ),
}

_CODE = re.compile(r"`[^`]*`|```.*?```", re.S)


def variants(text: str) -> list[tuple[str, str]]:
    """(variant found, preferred term) for every forbidden variant in `text` outside code."""
    prose = _CODE.sub(" ", text)
    return [
        (m.group(0), fix) for pattern, fix in FORBIDDEN.items() for m in re.finditer(pattern, prose)
    ]


# Chapter references: the course's own chapters are a bare "3장" (or "2, 4, 9장"); the guide's
# are "가이드 09장", two digits as the guide numbers them. "이 코스의 3장" is stiff, and a "09장"
# without "가이드" is ambiguous.
_GUIDE_REF = re.compile(r"(?<![0-9])0[0-9]장")
_GUIDE = re.compile(r"가이드(?:의)? (?:0[0-9]장?(?:, | 및 |과 |와 |·|–|~))*0[0-9]장")
_STIFF = re.compile(r"이 코스의 (?:[0-9]{1,2}|N)장|이 코스의 [0-9]{1,2}(?:, | 및 |과 |와 )")


def unqualified_chapter_refs(text: str) -> list[str]:
    """Chapter references that break the rule: "이 코스의 N장" (say "N장"), or a guide chapter
    "0N장" without "가이드" before it."""
    prose = _CODE.sub(" ", text)
    covered = [m.span() for m in _GUIDE.finditer(prose)]
    stiff = [m.group(0) for m in _STIFF.finditer(prose)]
    return stiff + [
        m.group(0)
        for m in _GUIDE_REF.finditer(prose)
        if not any(a <= m.start() < b for a, b in covered)
    ]


# A gloss: a Korean term followed by its English original in parentheses, "블록 테이블(block
# table)". The first use in a chapter is glossed; later uses are not.
_GLOSS = re.compile(r"[가-힣]\s?\(([A-Za-z][A-Za-z \-/]{2,})\)")


def repeated_glosses(chapter_text: str) -> dict[str, int]:
    """English glosses that a chapter gives more than once: {term: times}."""
    counts: dict[str, int] = {}
    for m in _GLOSS.finditer(_CODE.sub(" ", chapter_text)):
        term = m.group(1).strip().lower()
        counts[term] = counts.get(term, 0) + 1
    return {t: n for t, n in counts.items() if n > 1}
