"""Widgets driven headless: set .value, .click(), and check state and drawn pixels change."""

import matplotlib

matplotlib.use("Agg")

import paged
from paged.viz import widgets
from paged.viz.preemption_widget import PreemptionExplorer


def test_allocator_explorer_steps_and_resets():
    e = widgets.AllocatorExplorer(num_requests=20, kv_slots=4096)
    before = e.image.value
    e.steps_per_click.value = 50
    e.step_button.click()
    assert e.contiguous.step_index == e.paged.step_index == 50
    assert e.image.value != before
    assert "contiguous" in e.counters.value and "paged" in e.counters.value
    e.play.value += 1  # the Play widget ticks like this in a browser
    assert e.contiguous.step_index == 100
    e.policy.value = "oracle"  # a new setting restarts both runs
    assert e.contiguous.step_index == 0 and e.contiguous.config.policy == "oracle"
    e.block_size.value = 64
    assert e.paged.allocator.block_size == 64
    e.reset_button.click()
    assert e.paged.step_index == 0


def test_allocator_explorer_calls_out_a_fragmentation_refusal():
    e = widgets.AllocatorExplorer(num_requests=40, kv_slots=4096, policy="oracle")
    e.step(400)
    assert e.num_refusals["no_hole"] > 0
    assert "refused although" in e.events.value
    assert e.contiguous.usage()[0] < e.paged.usage()[0]  # paging holds more tokens


def test_block_table_explorer_fork_append_cow_and_errors():
    b = widgets.BlockTableExplorer(num_blocks=6, block_size=4)
    a = b.allocator
    first = b.image.value
    b.name.value = "B"
    b.fork_button.click()  # B shares A's two blocks
    assert a.block_table("B") == a.block_table("A") and a.ref_count(a.block_table("A")[1]) == 2
    assert "forked" in b.message.value and b.image.value != first
    b.seq.value = "B"
    b.append_button.click()  # B writes into the shared half-full block: copy-on-write
    assert "copy-on-write" in b.message.value
    assert a.block_table("B")[1] != a.block_table("A")[1]
    b.name.value = "big"
    b.tokens.value = 100
    state = (a.seq_ids, a.num_free_blocks)
    b.allocate_button.click()
    assert "OutOfBlocks" in b.message.value and (a.seq_ids, a.num_free_blocks) == state
    b.seq.value = "A"
    b.free_button.click()
    assert "A" not in a.seq_ids and b.seq.value == "B"


def test_block_size_explorer_redraws_on_slider():
    e = widgets.BlockSizeExplorer(requests=paged.alpaca_like(60), kv_slots=2000)
    before, text = e.image.value, e.readout.value
    e.slider.value = 128
    assert e.image.value != before and e.readout.value != text
    assert "<b>128</b>" in e.readout.value


def test_preemption_explorer_swaps_recomputes_and_resets():
    e = PreemptionExplorer(num_requests=30, kv_slots=1024, preemption="swap")
    before = e.image.value
    e.step(300)
    assert e.num_preemptions > 0 and e.sim.num_swapped_blocks > 0
    assert e.sim.num_recomputed_tokens == 0 and "swapped out" in e.counters.value
    assert e.image.value != before
    e.preemption.value = "recompute"  # a new setting restarts the run
    assert e.sim.step_index == 0 and e.sim.pool.cpu is None
    e.steps_per_click.value = 100
    for _ in range(3):
        e.step_button.click()
    assert e.sim.num_recomputed_tokens > 0 and e.sim.num_swapped_blocks == 0
    assert "to recompute" in e.counters.value


def test_the_korean_edition_gets_korean_widgets(monkeypatch):
    """PAGED_LANG=ko (the Korean setup cell) turns captions, buttons and status lines Korean."""
    monkeypatch.setenv("PAGED_LANG", "ko")
    table = widgets.BlockTableExplorer()
    assert table.append_button.description == "토큰 1개 추가"
    table.append_button.click()
    table.append_button.click()  # the third slot of block 2 of 4: still no new block
    assert "토큰 1개 추가" in table.message.value and "블록" in table.message.value
    explorer = widgets.AllocatorExplorer(num_requests=10)
    explorer.step(5)
    assert "5단계" in explorer.counters.value and "내부 단편화" in explorer.counters.value
