"""The prefix-caching explorer: requests with shared system prompts in a small cached pool.

Thin ipywidgets wiring over `paged.block_pool.CachingAllocator` and `paged.prefix_cache`, the
allocator the scheduler uses with `prefix_caching=True` (vLLM V1's rules): a request hashes its
full blocks, takes the longest cached run from its first block (never the last prompt token's
block), shares those blocks by ref count and gets the rest from the free queue's front, evicting
whatever cached block sits there. Finishing a request sends its cached blocks to the queue's
tail, still findable. Each request is prefilled when sent; nothing is decoded.
"""

from __future__ import annotations

import ipywidgets as W
from matplotlib.patches import Rectangle

from ..block_pool import CachingAllocator
from ..errors import require_int
from ..prefix_cache import block_hashes
from . import widget_text as T
from .canvas import Canvas
from .style import COLORS, ink_on

# Named system prompts (token ids mean nothing): "coder" opens with "assistant"'s first block,
# so it shares one block with it and no more.
SYSTEM_PROMPTS = {
    "assistant": tuple(range(100, 108)),  # two full blocks of 4
    "coder": tuple(range(100, 104)) + tuple(range(200, 208)),  # three
    "tutor": tuple(range(300, 306)),  # one full block and a half
}
CACHED_EDGE = "#009E73"  # free but cached: outlined
EVICTED_EDGE = "#D55E00"  # taken from the cache by the last request
FREE_FILL = COLORS["external_fragmentation"]
# request colours, light and dark in turn (neighbouring requests differ in lightness too);
# none is the cached outline's green or a slot category's colour
REQUEST_COLORS = (
    "#CC79A7", "#6A3D9A", "#F0E442", "#882255", "#B2DF8A", "#1F78B4", "#FB9A99", "#000000",
    "#999933", "#8C564B",
)  # fmt: skip


class PrefixCachingExplorer(W.VBox):
    """Send requests with chosen system prompts; watch hits, ref counts, the free queue and
    evictions."""

    def __init__(self, num_blocks: int = 14, block_size: int = 4, question_len: int = 3):
        num_blocks = require_int("num_blocks", num_blocks, at_least=1)
        block_size = require_int("block_size", block_size, at_least=1)
        longest = max(len(p) for p in SYSTEM_PROMPTS.values()) + 1
        if num_blocks * block_size < longest:
            raise ValueError(
                f"num_blocks={num_blocks} blocks of {block_size} hold fewer than the {longest} "
                f"tokens of the longest system prompt and one question token: give more blocks"
            )
        self.num_blocks, self.block_size = num_blocks, block_size
        none = (str(T.NO_PREFIX), "")
        self.prefix = W.Dropdown(
            options=[none, *[(k, k) for k in SYSTEM_PROMPTS]],
            value="assistant",
            description=str(T.PREFIX),
        )
        self.question = W.BoundedIntText(
            value=question_len, min=0, max=64, description=str(T.QUESTION)
        )
        self.salt = W.Text(value="", placeholder=str(T.TENANT), description=str(T.SALT))
        self.request = W.Dropdown(options=[], description=str(T.REQUEST))
        self.send_button = W.Button(description=str(T.SEND), icon="paper-plane")
        self.finish_button = W.Button(description=str(T.FINISH), icon="check")
        self.reset_button = W.Button(description=str(T.RESET), icon="undo")
        self.message = W.HTML()
        self.tables = W.HTML()
        self.image = W.Image(format="png")
        self.send_button.on_click(lambda _: self.send())
        self.finish_button.on_click(lambda _: self.finish())
        self.reset_button.on_click(lambda _: self.reset())
        rows = [
            W.HBox([self.prefix, self.question, self.salt, self.send_button]),
            W.HBox([self.request, self.finish_button, self.reset_button]),
        ]
        self._canvas = Canvas(
            (9, 3.3), 2, 1, adjust=dict(left=0.01, right=0.99, top=0.9, bottom=0.02, hspace=0.5)
        )
        super().__init__([*rows, self.message, self.tables, self.image])
        self.reset()

    # ---- state -----------------------------------------------------------------------------
    def reset(self) -> None:
        """An empty pool: no request, nothing cached."""
        self.allocator = CachingAllocator(self.num_blocks, self.block_size)  # free queue in order
        self.num_sent = 0
        self.info: dict[str, dict] = {}  # request -> its prefix, salt, hits (running ones)
        self.tags: dict[int, str] = {}  # hash -> "R1.0": the request and block that computed it
        self.evicted: list[int] = []  # blocks the last request took from the cache
        self.num_evictions = self.num_hit_tokens = self.num_prompt_tokens = 0
        n, size = self.num_blocks, self.block_size
        self.redraw(T.PREFIX_START.format(n=n, size=size))

    def prompt(self) -> tuple[int, ...]:
        """The next request's prompt: its system prompt, then question tokens no other has."""
        start = 1000 * (self.num_sent + 1)
        system = SYSTEM_PROMPTS.get(self.prefix.value, ())
        return system + tuple(range(start, start + self.question.value))

    def tag(self, block_id: int) -> str | None:
        """Whose block a cached block was ("R1.0": request R1's first block), None if uncached."""
        h = self.allocator.block_hash.get(block_id)
        return None if h is None else self.tags.get(h, "?")

    # ---- actions ---------------------------------------------------------------------------
    def send(self) -> None:
        """Admit a request with the chosen prefix, question and salt (prefilled at once)."""
        a, ids, req = self.allocator, self.prompt(), f"R{self.num_sent + 1}"
        if not ids:
            self.redraw(error=str(T.EMPTY_PROMPT))
            return
        salt = self.salt.value.strip() or None
        hashes = block_hashes(ids, self.block_size, salt)
        hits = a.find_cached(hashes, len(ids))
        # the cap, not a miss: the next block is cached, but it holds the last prompt token
        capped = len(hits) < len(hashes) and hashes[len(hits)] in a.cached_blocks
        needed = a.num_blocks_to_allocate(len(ids), hits)
        if needed > a.num_free_blocks:  # check, then act: the pool stays as it was
            self.redraw(error=T.NO_ROOM.format(req=req, needed=needed, free=a.num_free_blocks))
            return
        hit_tags = [f"{b} ({self.tag(b)})" for b in hits]
        cached_before = dict(a.block_hash)
        table = a.allocate_cached(req, len(ids), hits)
        self.evicted = [b for b in table[len(hits) :] if b in cached_before]
        evictions = [
            T.EVICTED.format(block=b, tag=self.tags.get(cached_before[b], "?"))
            for b in self.evicted
        ]
        a.cache_full_blocks(req, hashes)  # vLLM: a prompt's full blocks are cached at allocation
        for i, b in enumerate(table[len(hits) :], len(hits)):
            if b in a.block_hash:
                self.tags.setdefault(a.block_hash[b], f"{req}.{i}")
        self.num_sent += 1
        self.num_evictions += len(self.evicted)
        self.num_hit_tokens += len(hits) * self.block_size
        self.num_prompt_tokens += len(ids)
        self.info[req] = dict(prefix=self.prefix.value or str(T.NO_SYSTEM), salt=salt, hits=hits)
        lines = [T.SENT.format(req=req, prefix=self._prefix_name(), tokens=len(ids), table=table)]
        if hits:
            lines.append(T.HITS.format(num=len(hits), blocks=", ".join(hit_tags)))
        else:
            lines.append(str(T.NO_HITS))
        if capped:
            lines[-1] += " " + str(T.HIT_CAP)
        self.redraw("<br>".join(lines + evictions), select=req)

    def finish(self) -> None:
        """Free the chosen request: unhashed blocks to the queue's front, cached ones to its tail."""
        req = self.request.value
        if req is None or req not in self.allocator:
            self.redraw(error=str(T.NOTHING_RUNNING))
            return
        self.allocator.free(req)
        del self.info[req]
        self.evicted = []
        self.redraw(T.FINISHED.format(req=req))

    def _prefix_name(self) -> str:
        name = self.prefix.value or str(T.NO_SYSTEM)
        salt = self.salt.value.strip()
        return f"{name}, {T.SALT} {salt!r}" if salt else name

    # ---- drawing ---------------------------------------------------------------------------
    def redraw(self, message: str = "", error: str = "", select: str | None = None) -> None:
        a = self.allocator
        ids = a.seq_ids
        self.request.options = ids
        if ids:
            self.request.value = select if select in ids else (self.request.value or ids[0])
            if self.request.value not in ids:
                self.request.value = ids[0]
        text = f"<span style='color:#D55E00'><b>{error}</b></span>" if error else message
        counters = T.PREFIX_COUNTERS.format(
            free=a.num_free_blocks,
            n=a.num_blocks,
            cached=len(a.block_hash),
            hit=self.num_hit_tokens,
            total=self.num_prompt_tokens,
            evictions=self.num_evictions,
        )
        self.message.value = f"<p>{text}<br><small>{counters}</small></p>"
        rows = []
        for req in ids:
            info = self.info[req]
            salt = f", {T.SALT} {info['salt']!r}" if info["salt"] else ""
            rows.append(
                T.TABLE_ROW.format(
                    req=f"<b>{req}</b>",
                    prefix=info["prefix"],
                    salt=salt,
                    table=a.block_table(req),
                    hits=len(info["hits"]),
                )
            )
        self.tables.value = f"<p style='font-family:monospace'>{'<br>'.join(rows)}</p>"
        pool_ax, queue_ax = self._canvas.fresh()
        self._draw_pool(pool_ax)
        self._draw_queue(queue_ax)
        self.image.value = self._canvas.png()

    def _cell(self, ax, x, block_id, fill, edge, lw, lines) -> None:
        """One block at column x: its id top left, then `lines` centred below."""
        ax.add_patch(Rectangle((x + 0.05, 0.05), 0.9, 0.9, facecolor=fill, edgecolor=edge, lw=lw))
        ink = ink_on(fill)
        ax.text(x + 0.1, 0.88, str(block_id), fontsize=10, fontweight="bold", color=ink, va="top")
        for k, line in enumerate(lines):
            ax.text(x + 0.5, 0.5 - 0.28 * k, line, fontsize=9, color=ink, ha="center", va="center")

    def _frame(self, ax, n, title) -> None:
        ax.set_xlim(-0.1, max(n, 1) + 0.1)
        ax.set_ylim(-0.3, 1.05)
        ax.axis("off")
        ax.set_title(title, fontsize=10, loc="left")

    def _draw_pool(self, ax) -> None:
        a = self.allocator
        holder = {}
        for req in a.seq_ids:  # the first request holding a block colours it
            for b in a.block_table(req):
                holder.setdefault(b, int(req[1:]))
        for b in range(a.num_blocks):
            tag, refs = self.tag(b), a.ref_count(b)
            if refs:
                fill = REQUEST_COLORS[(holder[b] - 1) % len(REQUEST_COLORS)]
                edge, lw = "black", 0.8
            else:
                fill, edge, lw = ("white", CACHED_EDGE, 2.5) if tag else (FREE_FILL, "#8C8C8C", 0.5)
            if b in self.evicted:
                edge, lw = EVICTED_EDGE, 3
            lines = [f"×{refs}" if refs else "", tag or ""]
            self._cell(ax, b, b, fill, edge, lw, lines)
        if self.evicted:
            ax.text(0.05, -0.05, str(T.EVICTED_NOTE), fontsize=9, color="black", va="top")
        size = self.block_size
        self._frame(ax, a.num_blocks, T.PREFIX_POOL_TITLE.format(n=a.num_blocks, size=size))

    def _draw_queue(self, ax) -> None:
        queue = list(self.allocator.free_block_ids)
        for x, b in enumerate(queue):
            tag = self.tag(b)
            fill, edge, lw = ("white", CACHED_EDGE, 2.5) if tag else (FREE_FILL, "#8C8C8C", 0.5)
            self._cell(ax, x, b, fill, edge, lw, ["", tag or ""])
        if queue:
            ax.text(0.5, -0.02, str(T.FRONT), fontsize=8, ha="center", va="top")
            ax.text(len(queue) - 0.5, -0.02, str(T.TAIL), fontsize=8, ha="center", va="top")
        else:
            ax.text(0.1, 0.5, str(T.QUEUE_EMPTY), fontsize=9, va="center")
        self._frame(ax, self.allocator.num_blocks, str(T.FREE_QUEUE_TITLE))


__all__ = ["SYSTEM_PROMPTS", "PrefixCachingExplorer"]
