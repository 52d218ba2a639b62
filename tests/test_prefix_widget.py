"""The prefix-caching explorer driven headless: its state is the library's, step for step."""

import matplotlib

matplotlib.use("Agg")

import pytest

from paged.block_pool import CachingAllocator
from paged.prefix_cache import block_hashes
from paged.viz.prefix_widget import SYSTEM_PROMPTS, PrefixCachingExplorer


def counts(a) -> list[int]:
    return [a.ref_count(b) for b in range(a.num_blocks)]


def state(e: PrefixCachingExplorer):
    a = e.allocator
    return (
        list(a.free_block_ids),
        counts(a),
        {s: a.block_table(s) for s in a.seq_ids},
        dict(a.block_hash),
        e.num_sent,
        e.num_evictions,
    )


def send(e, prefix, question=3, salt=""):
    e.prefix.value, e.question.value, e.salt.value = prefix, question, salt
    e.send_button.click()


def finish(e, req):
    e.request.value = req
    e.finish_button.click()


def test_a_second_request_hits_the_first_ones_blocks_and_shares_them():
    e = PrefixCachingExplorer(num_blocks=14, block_size=4)
    before = e.image.value
    send(e, "assistant")  # 8 + 3 tokens: blocks 0, 1 full and cached, block 2 not full
    a = e.allocator
    assert a.block_table("R1") == [0, 1, 2] and sorted(a.block_hash) == [0, 1]
    assert e.tag(0) == "R1.0" and e.tag(1) == "R1.1" and e.tag(2) is None
    assert "no cached block hit" in e.message.value and e.image.value != before
    send(e, "assistant")
    assert a.block_table("R2") == [0, 1, 3]
    assert [a.ref_count(b) for b in (0, 1, 2, 3)] == [2, 2, 1, 1]
    assert "2 cached blocks hit: 0 (R1.0), 1 (R1.1)" in e.message.value
    send(e, "coder")  # opens with assistant's first block only
    assert a.block_table("R3")[0] == 0 and a.ref_count(0) == 3 and e.info["R3"]["hits"] == [0]
    assert "R3</b> (coder): block table [0, " in e.tables.value
    assert e.num_hit_tokens == 12 and e.num_prompt_tokens == 11 + 11 + 15


def test_the_widget_does_what_the_library_does():
    """The same requests on a bare CachingAllocator: the same tables, ref counts and queue."""
    e = PrefixCachingExplorer(num_blocks=14, block_size=4)
    a = CachingAllocator(14, 4)
    script = [("send", "assistant", 3), ("send", "tutor", 5), ("send", "assistant", 2)]
    script += [("finish", "R1", 0), ("send", "coder", 4), ("finish", "R3", 0)]
    script += [("send", "", 28), ("finish", "R2", 0), ("send", "assistant", 1)]
    n = 0
    for op, arg, q in script:
        if op == "send":
            n += 1
            ids = SYSTEM_PROMPTS.get(arg, ()) + tuple(range(1000 * n, 1000 * n + q))
            hashes = block_hashes(ids, 4)
            a.allocate_cached(f"R{n}", len(ids), a.find_cached(hashes, len(ids)))
            a.cache_full_blocks(f"R{n}", hashes)
            send(e, arg, q)
        else:
            a.free(arg)
            finish(e, arg)
        assert "needs" not in e.message.value  # every request of the script fits
        assert list(e.allocator.free_block_ids) == list(a.free_block_ids)
        assert counts(e.allocator) == counts(a) and e.allocator.block_hash == a.block_hash
        assert {s: e.allocator.block_table(s) for s in a.seq_ids} == {
            s: a.block_table(s) for s in a.seq_ids
        }
    assert e.num_evictions > 0 and e.num_hit_tokens > 0  # the script reaches both


def test_finishing_queues_unhashed_blocks_in_front_and_cached_ones_at_the_tail():
    e = PrefixCachingExplorer(num_blocks=14, block_size=4)
    send(e, "assistant")  # blocks 0, 1 (cached), 2
    finish(e, "R1")
    assert list(e.allocator.free_block_ids) == [2, *range(3, 14), 1, 0]
    assert "still findable" in e.message.value and e.request.options == ()
    # a hit on a free cached block takes it out of the queue (vLLM's touch)
    send(e, "assistant")
    assert e.allocator.block_table("R2") == [0, 1, 2]
    assert list(e.allocator.free_block_ids) == list(range(3, 14))


def test_an_allocation_from_the_front_evicts_a_cached_block():
    e = PrefixCachingExplorer(num_blocks=14, block_size=4)
    send(e, "assistant")
    finish(e, "R1")  # queue: 2, 3 .. 13, then cached 1, 0
    send(e, "", 44)  # 11 blocks: 2 .. 12
    assert list(e.allocator.free_block_ids) == [13, 1, 0] and e.num_evictions == 0
    send(e, "", 8)  # 2 blocks: 13, then cached block 1 (R1.1) is taken and loses its hash
    assert e.allocator.block_table("R3") == [13, 1] and e.evicted == [1]
    assert e.num_evictions == 1 and "eviction: block 1 was R1.1's" in e.message.value
    assert e.tag(0) == "R1.0" and e.tag(1) == "R3.1"  # its new hash, R3's second block
    finish(e, "R3")  # its two cached blocks to the tail, reversed
    assert list(e.allocator.free_block_ids) == [0, 1, 13]
    send(e, "assistant", 1)  # only the first block is still cached; the other two evict R3's
    assert e.info["R4"]["hits"] == [0] and e.allocator.block_table("R4") == [0, 1, 13]
    assert e.evicted == [1, 13] and e.num_evictions == 3


def test_a_salt_separates_tenants():
    e = PrefixCachingExplorer(num_blocks=14, block_size=4)
    send(e, "assistant")
    send(e, "assistant", salt="acme")  # another tenant: its first block's hash differs
    assert e.info["R2"]["hits"] == []
    send(e, "assistant", salt="acme")
    assert e.info["R3"]["hits"] == e.allocator.block_table("R2")[:2]
    assert "salt 'acme'" in e.tables.value


def test_the_cap_before_the_last_token_is_explained():
    e = PrefixCachingExplorer(num_blocks=14, block_size=4)
    send(e, "assistant", 0)  # exactly two full blocks: both cached
    send(e, "assistant", 0)  # the second block holds the last token: computed again
    assert e.info["R2"]["hits"] == [0]
    assert "always computed" in e.message.value


def test_bad_input_says_why_and_changes_nothing():
    e = PrefixCachingExplorer(num_blocks=14, block_size=4)
    send(e, "assistant")
    before, image = state(e), e.image.value
    send(e, "", 0)  # an empty prompt
    assert "empty prompt" in e.message.value and state(e) == before
    send(e, "coder", 60)  # 18 blocks, one of them a hit: more than the pool has free
    assert "needs 17 free blocks and 11 are free" in e.message.value
    assert "nothing changed" in e.message.value and state(e) == before
    assert e.image.value == image  # the picture too
    finish(e, "R1")
    e.finish_button.click()  # nothing left to finish
    assert "no request is running" in e.message.value
    with pytest.raises(ValueError, match="longest system prompt"):
        PrefixCachingExplorer(num_blocks=3, block_size=4)


def test_reset_empties_the_pool():
    e = PrefixCachingExplorer()
    send(e, "assistant")
    send(e, "assistant")
    e.reset_button.click()
    assert e.allocator.seq_ids == [] and e.allocator.block_hash == {}
    assert e.num_sent == 0 and e.request.options == () and "empty pool" in e.message.value


def test_the_korean_edition_gets_a_korean_explorer(monkeypatch):
    monkeypatch.setenv("PAGED_LANG", "ko")
    e = PrefixCachingExplorer()
    assert e.send_button.description == "보내기" and e.finish_button.description == "요청 끝내기"
    send(e, "assistant")
    send(e, "assistant")
    assert "캐시에 있던 블록 2개 적중" in e.message.value and "빈 블록" in e.message.value
    assert "블록 테이블" in e.tables.value
