"""`python -m paged.course.widget_bench`: the median redraw time of each explorer (MEASURED).

Run it on the machine you report; the numbers are this machine's, with its Python and matplotlib.
"""

from __future__ import annotations

import statistics
import time

from ..paging import BLOCK_SIZES
from ..viz.preemption_widget import PreemptionExplorer
from ..viz.widgets import AllocatorExplorer, BlockSizeExplorer, BlockTableExplorer


def median_redraw_ms(action, repeats: int = 15) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        action()
        times.append(1000 * (time.perf_counter() - t0))
    return statistics.median(times)


def main() -> None:
    explorer = AllocatorExplorer()
    explorer.steps_per_click.value = 1
    table = BlockTableExplorer()
    size = BlockSizeExplorer()
    preemption = PreemptionExplorer()
    preemption.steps_per_click.value = 1
    options = iter(BLOCK_SIZES * 4)
    print(f"allocator explorer step: {median_redraw_ms(explorer.step_button.click):.0f} ms median")
    print(f"block-table explorer append: {median_redraw_ms(table.append_button.click):.0f} ms")
    print(
        f"block-size slider move: "
        f"{median_redraw_ms(lambda: setattr(size.slider, 'value', next(options))):.0f} ms"
    )
    print(f"preemption explorer step: {median_redraw_ms(preemption.step_button.click):.0f} ms")


if __name__ == "__main__":
    main()
