"""What chapter 11 prints about an engine run, in the edition's language.

The chapter's cells print these lines instead of their own f-strings, so a cell reads as plain
Python and the Korean edition prints Korean: every sentence lives in the catalogue below.
"""

from __future__ import annotations

from ..text import msg


def rules_name(result) -> str:
    """The course's side, named by the rules it ran under (`GenerateResult.rules`)."""
    return str({"course": COURSE_OWN, "vllm-v1": COURSE_V1}[result.rules])


def engine_header(engine, num_prompts: int, max_new: int) -> list[str]:
    """The run's size, then the vLLM classes it went through (module and class)."""
    lines = [
        HEADER.format(
            engine=engine.engine,
            version=engine.version,
            requests=num_prompts,
            max_new=max_new,
            blocks=engine.kv_blocks,
            block_size=engine.block_size,
        )
    ]
    for name, o in engine.objects.items():
        if isinstance(o, dict):
            lines.append(f"  {name:15s} {o['module']}.{o['class']}")
    fields = engine.objects.get("KVCacheBlock", {}).get("fields", [])
    lines.append(FIELDS.format(fields=list(fields[:5])))
    return lines


def same_answers(engine, *courses) -> str:
    """How many of the engine's answers each course run reproduced, token for token."""
    parts = []
    for course in courses:
        same = sum(a == b for a, b in zip(course.tokens, engine.tokens, strict=True))
        parts.append(SAME_PART.format(name=rules_name(course), same=same, total=len(engine.tokens)))
    return SAME.format(engine=engine.engine, parts="; ".join(parts))


def cached_tokens(predicted: int, engine, prompt_tokens: int) -> str:
    """The block-hash prediction of cached prompt tokens beside the engine's own count (at each
    request's first admission), then the tokens resumed requests found cached, if any."""
    line = CACHED.format(
        predicted=predicted,
        engine=engine.engine,
        counted=engine.cached_prompt_tokens,
        total=prompt_tokens,
    )
    if engine.resumed_cached_tokens:
        line += str(RESUMED_CACHED.format(n=engine.resumed_cached_tokens))
    return line


def speed(engine, course_tokens_per_s: float) -> str:
    """New tokens per second on both sides (MEASURED where they ran; the recording's if absent),
    with the torch threads each side computed with where the run recorded them (the course's
    model takes as many as vLLM's child: `paged.model.num_threads`)."""
    threads = engine.machine.get("threads")
    return (SPEED if threads is None else SPEED_THREADS).format(
        engine=engine.engine,
        version=engine.version,
        engine_tps=engine.tokens_per_s,
        start=engine.seconds["engine_start"],
        course_tps=course_tokens_per_s,
        cores=engine.machine.get("cores"),
        threads=threads,
    )


COURSE_V1 = msg("course (V1 rules)", "코스 (V1 규칙)")
COURSE_OWN = msg("course (own rules)", "코스 (자체 규칙)")
HEADER = msg(
    "{engine} {version}: {requests} requests, {max_new} new tokens at most, {blocks} blocks of "
    "{block_size} (block 0 is vLLM's null block)",
    "{engine} {version}: 요청 {requests}개, 새 토큰 최대 {max_new}개, 크기 {block_size}인 블록 "
    "{blocks}개 (블록 0은 vLLM의 널 블록)",
)
ANSWER = msg("{engine}, answer {i}:", "{engine}의 {i}번 답:")
FIELDS = msg("  KVCacheBlock fields: {fields}", "  KVCacheBlock의 필드: {fields}")
SAME = msg("answers equal to {engine}'s: {parts}", "{engine}의 답과 토큰까지 같은 답: {parts}")
SAME_PART = msg("{name} {same} of {total}", "{name} {total}개 중 {same}개")
CACHED = msg(
    "predicted cached prompt tokens: {predicted}; {engine}'s own count: {counted} "
    "(of {total} prompt tokens)",
    "캐시에서 찾을 것으로 예측한 프롬프트 토큰: {predicted}개, {engine} 자체 집계: {counted}개 "
    "(프롬프트 토큰 {total}개 중)",
)
RESUMED_CACHED = msg(
    "; and {n} more found cached by requests resumed after a preemption",
    "; 이와 별도로 선점 뒤 재개된 요청이 캐시에서 찾은 토큰 {n}개",
)
SPEED = msg(
    "{engine} {version} (CPU): {engine_tps:.0f} new tokens/s, engine start {start:.0f} s; the "
    "course: {course_tps:.0f} new tokens/s (MEASURED, {cores} cores; the recording's numbers if "
    "vLLM is absent)",
    "{engine} {version} (CPU): 초당 새 토큰 {engine_tps:.0f}개, 엔진 시작 {start:.0f}초; 코스: "
    "초당 새 토큰 {course_tps:.0f}개 (MEASURED, 코어 {cores}개; vLLM이 없으면 기록본의 수치)",
)
SPEED_THREADS = msg(
    "{engine} {version} (CPU): {engine_tps:.0f} new tokens/s, engine start {start:.0f} s; the "
    "course: {course_tps:.0f} new tokens/s (MEASURED; torch threads per side: {threads}, cores: "
    "{cores}; the recording's numbers if vLLM is absent)",
    "{engine} {version} (CPU): 초당 새 토큰 {engine_tps:.0f}개, 엔진 시작 {start:.0f}초; 코스: "
    "초당 새 토큰 {course_tps:.0f}개 (MEASURED, 코어 {cores}개에서 각각 torch 스레드 {threads}개; "
    "vLLM이 없으면 기록본의 수치)",
)
