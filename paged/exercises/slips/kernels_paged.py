"""Slips of the paged kernel's Triton puzzles (chapters 6 and 7), by puzzle: `HINTS`, shared by
every paged puzzle, then the online softmax's, the known-max tile loop's, the GQA scores', the
split-K merge's. Each hint's key is the mistake that the puzzle's predicate (in `kernels.py`,
`kernels_attention.py`, `kernels_merge.py`) recognises in what a kernel stored; the address
slips' kernel hints are `address.KERNEL_HINTS`."""

from __future__ import annotations

from ...text import msg

HINTS = {
    "whole_tiles": msg(
        "the partly filled last tile was left out: right where seq_len is a multiple of TILE, "
        "and a sequence shorter than TILE got no tile at all (0 / 0).",
        "일부만 찬 마지막 타일이 빠졌습니다. seq_len이 TILE의 배수인 곳에서는 맞고, TILE보다 "
        "짧은 시퀀스는 타일을 하나도 받지 못했습니다(0 / 0).",
    ),
    "store": msg(
        "the last tile stored past the end of the sequence.",
        "마지막 타일이 시퀀스 끝 너머에 store했습니다.",
    ),
    "one_d": msg(
        "a 1-D mask on a 2-D tile: mask has shape (TILE,) and the tile (TILE, ROW); Triton "
        "lines shapes up from the last dimension, so your mask switched COLUMNS on and off by "
        "a test on positions.",
        "2차원 타일에 1차원 마스크를 썼습니다. 마스크는 (TILE,), 타일은 (TILE, ROW) 모양이고 Triton은 마지막 차원부터 모양을 맞추므로, "
        "위치에 대한 검사가 열을 켜고 껐습니다.",
    ),
    "tile": msg(
        "some positions were never written: the programs' tiles do not cover the whole sequence.",
        "쓰이지 않은 위치가 있습니다. 프로그램들의 타일이 시퀀스 전체를 덮지 않습니다.",
    ),
    "address": msg(
        "some tokens came from the wrong rows of the cache: the case above names the slot "
        "read and the slot the token lives in.",
        "일부 토큰을 캐시의 엉뚱한 행에서 가져왔습니다. 위의 사례가 읽은 슬롯과 토큰이 실제로 있는 슬롯을 보여 줍니다.",
    ),
    "nan_read": msg(
        "NaN: you read a slot that holds no token (the checker keeps NaN there, a real cache "
        "keeps stale values).",
        "NaN입니다. 토큰이 없는 슬롯을 읽었습니다(채점기는 그곳에 NaN을, 실제 캐시는 오래된 값을 둡니다).",
    ),
    "neg_inf": msg(
        "positions past seq_len hold a finite score; the spec asks for -inf there, which the "
        "softmax turns into a weight of 0.",
        "seq_len 이후 위치에 유한한 점수가 들어 있습니다. 명세는 그곳에 -inf를 요구하고, 소프트맥스가 그것을 가중치 0으로 바꿉니다.",
    ),
    "scale": msg(
        "every score is off by the same factor, 1 / scale: q · k is right, and the scale never "
        "reached it.",
        "모든 점수가 같은 배수 1 / scale만큼 어긋났습니다. q · k는 맞고, scale이 거기에 "
        "닿지 않았습니다.",
    ),
    "own_scale": msg(
        "the scores are scaled by HEAD_DIM ** -0.5 whatever the `scale` argument says: right "
        "only in the cases whose scale happens to be HEAD_DIM ** -0.5.",
        "`scale` 인자가 무엇이든 점수가 HEAD_DIM ** -0.5로 조정되었습니다. scale이 마침 "
        "HEAD_DIM ** -0.5인 사례에서만 맞습니다.",
    ),
    "kv_head": msg(
        "right only for kv_head 0: KV head 0 is read whatever kv_head says.",
        "kv_head가 0일 때만 맞습니다. kv_head가 무엇이든 KV 헤드 0을 읽습니다.",
    ),
    "slot_heads": msg(
        "tokens' rows overlap: a slot holds the K of every KV head of one token, KV_HEADS * "
        "HEAD_DIM numbers.",
        "토큰들의 행이 겹칩니다. 슬롯 하나에는 한 토큰의 모든 KV 헤드의 K, 즉 숫자 KV_HEADS * HEAD_DIM개가 들어 있습니다.",
    ),
    "head_mod": msg(
        "query heads read the wrong KV heads: yours deals them out in turn (h % KV_HEADS), "
        "while a group is GROUP consecutive query heads (chapter 5).",
        "쿼리 헤드가 엉뚱한 KV 헤드를 읽었습니다. 여러분의 코드는 헤드를 번갈아 나눠 주지만(h % KV_HEADS), 그룹은 연속한 쿼리 헤드 "
        "GROUP개입니다(5장).",
    ),
    "head_div": msg(
        "query heads read the wrong KV heads: yours gives each run of KV_HEADS consecutive query "
        "heads one KV head, while a group is GROUP of them (chapter 5).",
        "쿼리 헤드가 엉뚱한 KV 헤드를 읽었습니다. 여러분의 코드는 연속한 쿼리 헤드 KV_HEADS개마다 "
        "KV 헤드 하나를 주지만, 그룹은 GROUP개입니다(5장).",
    ),
    "one_token": msg(
        "NaN only for the sequences of one token: nothing of theirs was added to l_i (0 / 0), "
        "so their only tile never ran.",
        "토큰이 하나뿐인 시퀀스에서만 NaN입니다. 그 시퀀스는 l_i에 아무것도 더하지 못했습니다(0 / 0). "
        "하나뿐인 타일이 실행되지 않았습니다.",
    ),
    "tail_unwritten": msg(
        "the positions past seq_len in the last tile were never written; the spec asks for -inf "
        "there, which the softmax turns into a weight of 0.",
        "마지막 타일의 seq_len 이후 위치에 아무것도 쓰지 않았습니다. 명세는 그곳에 -inf를 요구하고, "
        "소프트맥스가 그것을 가중치 0으로 바꿉니다.",
    ),
    "physical": msg(
        "each token's row was stored where its slot lies in the cache, not at its position in the "
        "sequence: out came out in the pool's order.",
        "각 토큰의 행을 시퀀스 안의 위치가 아니라 캐시에서 그 슬롯이 있는 곳에 store했습니다. out이 "
        "풀의 순서로 채워졌습니다.",
    ),
    "group_rows": msg(
        "rows past GROUP of the padded (BLOCK_G, TILE) tile were stored: they belong to other "
        "KV heads' query heads, or to nobody.",
        "덧댄 (BLOCK_G, TILE) 타일에서 GROUP 너머의 행까지 store했습니다. 그 행은 다른 KV 헤드의 쿼리 헤드 것이거나 누구의 것도 "
        "아닙니다.",
    ),
}


SOFTMAX = {
    "no_rescale": msg(
        "you never rescale the old l_i and acc: {why}",
        "이전 l_i와 acc의 배율을 한 번도 다시 맞추지 않았습니다: {why}",
    ),
    "tile_max": msg(
        "you subtract each tile's own max and never correct the earlier tiles: {why}",
        "타일마다 그 타일의 최댓값을 빼고 이전 타일은 고치지 않았습니다: {why}",
    ),
    "l_only": msg(
        "you rescale l_i but not acc: {why}", "l_i의 배율은 다시 맞췄지만 acc는 그대로입니다: {why}"
    ),
    "acc_only": msg(
        "you rescale acc but not l_i: {why}", "acc의 배율은 다시 맞췄지만 l_i는 그대로입니다: {why}"
    ),
    "no_mask": msg(
        "positions past seq_len in the last tile got a score of 0.0 and a weight.",
        "마지막 타일에서 seq_len 이후 위치가 점수 0.0을 받아 가중치를 얻었습니다.",
    ),
    "overflow": msg(
        "inf or NaN where the scores are large: exp(s) overflows (float32 above ~88, float64 "
        "above ~709).",
        "점수가 큰 곳에서 inf나 NaN이 나왔습니다. exp(s)가 넘칩니다(float32는 약 88, float64는 약 709 이상).",
    ),
    "nan": msg(
        "NaN or inf. Either something on the first tile is measured against a running max "
        "that is still -inf, or a K or V load that is not masked with pos < seq_len read a "
        "slot with no token (NaN here, stale values on a GPU: an unmasked load), and 0 × NaN "
        "= NaN.",
        "NaN이나 inf입니다. 첫 타일에서 무언가가 아직 -inf인 지금까지의 최댓값을 기준으로 계산되었거나, pos < seq_len으로 마스크하지 않은 K나 "
        "V load가 토큰 없는 슬롯(여기서는 NaN, GPU에서는 오래된 값)을 읽어 0 × NaN = NaN이 "
        "되었습니다(마스크 없는 load).",
    ),
    "scale": msg(
        "the output is what attention gives with scale = 1: the weights come from q · k itself, "
        "so they are too sharp by a factor 1 / scale in the exponent.",
        "출력이 scale = 1일 때의 어텐션과 같습니다. 가중치가 q · k 자체에서 나와서, 지수가 "
        "1 / scale배만큼 지나치게 뾰족합니다.",
    ),
    "negative": msg(
        "wrong only for the heads whose scores all lie far below 0 (around -1000 or lower), right "
        "for the others: something there starts from, or is measured against, a number above "
        "the scores rather than the scores themselves.",
        "점수가 모두 0보다 한참 아래(약 -1000 이하)인 헤드에서만 틀렸고 나머지 헤드는 맞습니다. 그 "
        "헤드에서 무언가가 점수 자체가 아니라 점수보다 큰 수에서 출발하거나 그 수를 기준으로 잽니다.",
    ),
}


KNOWN = {
    "no_divide": msg(
        "each output row is the right one times a number of its own, the sum of that row's "
        "weights exp(s - m): softmax weights add up to 1, and the ones you summed do not.",
        "출력의 각 행이 맞는 행에 그 행만의 수를 곱한 값이고, 그 수는 그 행의 가중치 "
        "exp(s - m)의 합입니다. 소프트맥스 가중치의 합은 1인데, 더한 가중치의 합은 1이 아닙니다.",
    ),
    "no_mask": msg(
        "the output shrinks towards 0, by one factor per head, only where seq_len is not a "
        "multiple of TILE: lanes past seq_len in the last tile, which hold no token, got a "
        "weight.",
        "seq_len이 TILE의 배수가 아닌 곳에서만 출력이 헤드마다 일정한 비율로 0 쪽으로 "
        "줄어듭니다. 마지막 타일에서 seq_len 이후의 레인은 토큰이 없는데도 가중치를 받았습니다.",
    ),
    "tile_max": msg(
        "right on sequences of one tile, wrong from the second tile on: you subtract each "
        "tile's own maximum, not the m you were given, so the tiles' weights are in units of "
        "their own and their sums do not add up.",
        "타일이 하나인 시퀀스에서는 맞고 두 번째 타일부터 틀립니다. 주어진 m이 아니라 타일마다 그 "
        "타일의 최댓값을 빼서, 타일마다 가중치의 단위가 달라 그 합들을 더할 수 없습니다.",
    ),
    "overflow": msg(
        "NaN or inf where the scores are large (in the hundreds, or near ±1000), right where "
        "they are small: an exponential you take there leaves float32's range (exp overflows "
        "above about 88 and is exactly 0 below about -104, and then 0 / 0 or inf / inf is NaN).",
        "점수가 큰 곳(수백이거나 ±1000 근처)에서는 NaN이나 inf이고, 점수가 작은 곳에서는 "
        "맞습니다. 그곳에서 계산하는 지수가 float32의 범위를 벗어납니다(exp는 약 88 위에서 "
        "넘치고 약 -104 아래에서는 정확히 0이 되어, 0 / 0이나 inf / inf가 NaN이 됩니다).",
    ),
}


GQA = {
    "first_only": msg(
        "only the first query head of each group has its scores; the other heads' rows hold 0 "
        "where a score belongs, as if their rows of q had been read as zeros.",
        "각 그룹의 첫 쿼리 헤드만 점수가 맞고, 나머지 헤드의 행은 점수가 있어야 할 자리에 0이 "
        "들어 있습니다. 그 헤드들의 q 행을 0으로 읽은 것처럼 보입니다.",
    ),
    "precision": msg(
        "close, but not to float32 precision: the products lost bits (float16 or tf32 "
        "operands); the puzzle asks for full float32 products.",
        "가깝지만 float32 정밀도에는 못 미칩니다. 곱셈에서 비트를 잃었습니다(float16이나 tf32 "
        "피연산자). 이 퍼즐은 완전한 float32 곱을 요구합니다.",
    ),
}


MERGE = {
    "overflow": msg(
        "inf or NaN once the log-sum-exps are large or far apart (around ±1000, or 100 to "
        "3000 apart): an exp(...) in the weights left the float range (float32 ends near 88, "
        "float64 near 709).",
        "log-sum-exp가 크거나 서로 멀면(약 ±1000, 또는 100에서 3000 차이) inf나 NaN이 나옵니다. 가중치의 exp(...)가 "
        "부동소수점 범위를 벗어났습니다(float32는 약 88, float64는 약 709에서 끝납니다).",
    ),
    "pad_zero": msg(
        "the padding lanes p >= num_parts came back with lse 0.0 and took a weight.",
        "p >= num_parts인 덧댄 레인이 lse 0.0으로 돌아와 가중치를 얻었습니다.",
    ),
    "no_norm": msg(
        "each row is the answer times a number of its own: the weights do not add up to 1.",
        "행마다 정답에 그 행만의 수가 곱해져 있습니다. 가중치의 합이 1이 아닙니다.",
    ),
    "mean": msg(
        "you averaged the partitions' outputs: a partition's share of the softmax is "
        "exp(lse_p) / sum_q exp(lse_q), not 1 / num_parts.",
        "부분 출력을 단순 평균했습니다. 소프트맥스에서 파티션의 몫은 1 / num_parts가 아니라 "
        "exp(lse_p) / sum_q exp(lse_q)입니다.",
    ),
    "store": msg(
        "each program writes its own row's HEAD_DIM outputs, nothing else.",
        "각 프로그램은 자기 행의 출력 HEAD_DIM개만 씁니다.",
    ),
}
