"""Drawings: block-table arrows avoid every block they do not point at; shared blocks striped."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

import paged
from paged import viz
from paged.trace import paged_layout


def crosses(segment, box) -> bool:
    """Does an axis-parallel segment pass through the open interior of a 1 x 1 box?"""
    (x1, y1), (x2, y2) = segment
    bx, by = box
    lo_x, hi_x, lo_y, hi_y = min(x1, x2), max(x1, x2), min(y1, y2), max(y1, y2)
    return lo_x < bx + 1 and hi_x > bx and lo_y < by + 1 and hi_y > by


def forked_pool(seed):
    a = paged.PagedAllocator(num_blocks=24, block_size=4, seed=seed)
    a.allocate("A", 9)
    a.allocate("B", 3)
    a.fork("A", "C")
    a.append("C", 1)  # copy-on-write of the shared, half-full last block
    a.allocate("D", 14)
    return paged_layout(a)


@pytest.mark.parametrize("seed", range(6))
def test_arrows_never_cross_a_block_they_do_not_point_at(seed):
    layout = forked_pool(seed)
    geo = viz.table_geometry(layout, columns=6)
    logical = {(k, i) for k, (_, t, _) in enumerate(layout.tables) for i in range(len(t))}
    for k, target, points in viz.arrow_routes(layout, geo):
        segments = list(zip(points, points[1:], strict=False))
        assert all(a[0] == b[0] or a[1] == b[1] for a, b in segments)  # axis-parallel
        for b in range(layout.num_blocks):
            if b != target:
                assert not any(crosses(s, geo.physical(b)) for s in segments), (k, target, b)
        for kk, i in logical:  # only the first segment may leave its own logical block
            assert not any(crosses(s, geo.logical(kk, i)) for s in segments[1:])
        assert points[-1][1] == geo.physical(target)[1] + 1  # ends on the target's top edge


def test_a_shared_block_shows_every_holder():
    layout = forked_pool(0)
    holders = viz.block_holders(layout)
    a_table, c_table = layout.tables[0][1], layout.tables[2][1]
    assert holders[a_table[0]] == [0, 2] and holders[a_table[-1]] == [0]  # last one was copied
    assert holders[c_table[-1]] == [2]
    geo = viz.table_geometry(layout, 6)
    x, y = geo.physical(a_table[0])
    stripes = [b for b in viz.pool_stripes(layout, geo) if b[1] == y and x <= b[0] < x + 1]
    assert len({colour for *_, colour in stripes}) == 2  # A's colour and C's
    fig, ax = plt.subplots()
    viz.draw_block_table(layout, ax=ax, columns=6)  # draws those stripes
    plt.close(fig)


def test_the_schedule_picture_replays_every_step_of_the_run():
    from paged.viz.schedule import draw_schedule, schedule_states

    shapes = [(6, 7, 0), (9, 3, 0), (4, 9, 1), (10, 5, 2), (5, 6, 3), (7, 4, 5)]
    reqs = [paged.Request(i, p, o, arrival_time=a) for i, (p, o, a) in enumerate(shapes)]
    trace = paged.Scheduler(reqs, "paged", kv_slots=32, block_size=4, watermark=0.0).run()
    rows = schedule_states(reqs, trace)
    assert all(len(row) == len(trace) for row in rows.values())
    for t, record in enumerate(trace):  # the batch computed in a step, less who finished in it
        computed = [r for r, row in rows.items() if row[t] in ("prefill", "decode")]
        assert len(computed) - len(record.finished) == record.num_running
        assert {r for r, row in rows.items() if row[t] == "preempted"} == set(record.preempted)
    preempted = sum(row.count("preempted") for row in rows.values())
    assert preempted == sum(len(r.preempted) for r in trace) > 0  # this pool preempts
    for r in reqs:  # one decode per output token (recomputation keeps those already made)
        row = rows[r.req_id]
        assert row.count("decode") == r.output_len and row.count("prefill") >= 1
        assert row[: int(r.arrival_time)] == [None] * int(r.arrival_time)
    ax = draw_schedule(reqs, trace, num_blocks=8)
    assert len(ax.patches) == sum(s is not None for row in rows.values() for s in row)
    plt.close(ax.figure)
