"""Slips of the Triton on-ramp's puzzles (chapter 6), by puzzle: each hint's key is the mistake
that the puzzle's predicate (in `basics.py`, `basics_2d.py`, `basics_compute.py`) recognises in
what a kernel loaded and stored."""

from __future__ import annotations

from ...text import msg

STAMP = {
    "same_block": msg(
        "every program wrote the same first BLOCK elements; the elements after them were "
        "never written.",
        "모든 프로그램이 같은 첫 BLOCK개 원소에 썼고, 그 뒤의 원소에는 아무것도 쓰이지 않았습니다.",
    ),
    "offsets": msg(
        "each element holds its own index, not the number of the program it belongs to.",
        "각 원소에 그 원소가 속한 프로그램의 번호가 아니라 원소 자신의 인덱스가 들어 있습니다.",
    ),
    "cover": msg(
        "the programs' blocks overlap and the last elements stay unwritten: neighbouring "
        "programs start one element apart, not one block apart.",
        "프로그램들의 블록이 겹치고 마지막 원소들은 비어 있습니다. 이웃한 프로그램의 시작이 블록 하나가 아니라 원소 하나만큼 떨어져 있습니다.",
    ),
    "gaps": msg(
        "some elements of out were never written: the programs' stores together do not cover "
        "every program's BLOCK elements.",
        "out의 일부 원소에는 아무것도 쓰이지 않았습니다. 프로그램들의 store를 모두 합쳐도 각 "
        "프로그램의 BLOCK개 원소를 다 덮지 못합니다.",
    ),
    "past": msg(
        "your store reached past the programs * BLOCK elements of out.",
        "store가 out의 (프로그램 수 × BLOCK)개 원소 너머까지 닿았습니다.",
    ),
}


COPY = {
    "store": msg(
        "the last program's lanes past n stored too, past the end of out.",
        "마지막 프로그램에서 n 너머의 레인도 store해서 out의 끝을 넘어갔습니다.",
    ),
    "off_by_one": msg(
        "one lane too many got through your mask: the last program wrote element n, one past "
        "the end of out.",
        "마스크가 레인 하나를 더 통과시켰습니다. 마지막 프로그램이 out의 끝 바로 다음인 원소 n에 "
        "썼습니다.",
    ),
    "start": msg(
        "only the first BLOCK elements were copied: every program copied the same ones.",
        "첫 BLOCK개 원소만 복사되었습니다. 모든 프로그램이 같은 원소를 복사했습니다.",
    ),
}


COPY_2D = {
    "bounds_swapped": msg(
        "the cells stored form an N × M block (rows below N, columns below M) where the matrix "
        "is M × N.",
        "store한 칸들이 N × M 블록(N보다 작은 행, M보다 작은 열)을 이룹니다. 행렬은 M × N입니다.",
    ),
    "one_d": msg(
        "a 1-D mask on a 2-D tile: a mask of shape (BM,) next to a (BM, BN) tile is lined up "
        "with the LAST dimension, the columns, so a test on rows switched columns on and off.",
        "2차원 타일에 1차원 마스크를 썼습니다. (BM, BN) 타일 옆의 (BM,) 마스크는 마지막 차원인 열에 맞춰지므로, 행에 대한 검사가 열을 켜고 "
        "껐습니다.",
    ),
    "cols": msg(
        "columns c >= N got through your mask: each row holds only N numbers.",
        "c >= N인 열이 마스크를 통과했습니다. 행마다 숫자는 N개뿐입니다.",
    ),
    "rows": msg(
        "rows r >= M got through your mask: the matrix has only M rows.",
        "r >= M인 행이 마스크를 통과했습니다. 행렬에는 행이 M개뿐입니다.",
    ),
    "stride_x": msg(
        "rows were read from the wrong places: x is a view of a wider buffer, so its rows are "
        "not N elements apart.",
        "행을 엉뚱한 곳에서 읽었습니다. x는 더 넓은 버퍼의 뷰라서 행 사이가 N개 원소가 아닙니다.",
    ),
    "stride_out": msg(
        "rows of out landed in the wrong places: out's rows are not as far apart as x's.",
        "out의 행이 엉뚱한 곳에 들어갔습니다. out의 행 간격은 x의 행 간격과 다릅니다.",
    ),
    "axes": msg(
        "some tiles were never written: program_id(0) numbers the row tiles (BM rows each) and "
        "program_id(1) the column tiles (BN columns each).",
        "쓰이지 않은 타일이 있습니다. program_id(0)는 행 타일(각 BM행), program_id(1)은 열 "
        "타일(각 BN열)의 번호입니다.",
    ),
}


ROW_SOFTMAX = {
    "store": msg(
        "lanes past N stored too, into the next row or past the end.",
        "N 너머의 레인도 store해서 다음 행이나 끝 너머에 썼습니다.",
    ),
    "overflow": msg(
        "inf or NaN on rows with values in the hundreds: exp(x) overflows float32 above about 88.",
        "값이 수백인 행에서 inf나 NaN이 나왔습니다. float32의 exp(x)는 약 88을 넘으면 넘칩니다.",
    ),
    "underflow": msg(
        "NaN on rows where no exp(x) can overflow: every exponential of the row came out as 0 "
        "(the values it was given lay far below 0), and 0 / 0 is NaN.",
        "exp(x)가 넘칠 수 없는 행에서 NaN이 나왔습니다. 그 행의 지수가 모두 0이 되었고(지수에 들어간 "
        "값이 0보다 훨씬 작았습니다), 0 / 0은 NaN입니다.",
    ),
    "pad_zero": msg(
        "wrong on short rows whose values are all negative: the masked lanes came back as 0.0 "
        "(tl.load's default) and took part in the max and the sum.",
        "값이 모두 음수인 짧은 행에서 틀렸습니다. 마스크된 레인이 0.0(tl.load의 기본값)으로 돌아와 max와 합에 끼었습니다.",
    ),
    "no_sum": msg(
        "each row's outputs do not add up to 1.",
        "행마다 출력의 합이 1이 아닙니다.",
    ),
}


DOT = {
    "nan": msg(
        "NaN in out: a tile read past the edge of a or b, where the checker keeps NaN (and 0 "
        "× NaN is NaN, so zeros on the other side do not help): an unmasked load, whose mask "
        "admits lanes past the data, or addresses (a row stride) that run past a row's end.",
        "out에 NaN이 있습니다. 타일이 a나 b의 가장자리 너머를 읽었고 채점기는 그곳에 NaN을 둡니다(0 × NaN도 NaN이라 반대쪽의 0은 "
        "소용없습니다). 마스크가 데이터 너머의 레인을 허용한 마스크 없는 load(unmasked load)이거나, "
        "주소(행 스트라이드)가 행의 끝을 넘어갔습니다.",
    ),
    "loop": msg(
        "only the first BK columns of a (rows of b) were used: right when K ≤ BK, wrong when "
        "K is longer.",
        "a의 첫 BK개 열(b의 첫 BK개 행)만 쓰였습니다. K ≤ BK이면 맞고 K가 더 길면 틀립니다.",
    ),
    "partial": msg(
        "the last, partly filled chunk of K was left out: right where K is a multiple of BK, "
        "and all zeros where K is shorter than BK.",
        "일부만 찬 K의 마지막 조각이 빠졌습니다. K가 BK의 배수인 곳에서는 맞고, K가 BK보다 "
        "짧으면 모두 0입니다.",
    ),
    "stride": msg(
        "rows of a, b and out are stride_a, stride_b and stride_out elements apart, not K or N.",
        "a, b, out의 행 간격은 K나 N이 아니라 각각 stride_a, stride_b, stride_out입니다.",
    ),
    "rounded": msg(
        "close but not exact once the sums pass 2048, on integer data a float32 sum holds "
        "exactly: the sum was rounded to fewer bits somewhere along the way.",
        "합이 2048을 넘자 값이 근사치가 되었습니다. 이 정수 데이터는 float32 합이라면 정확히 "
        "담깁니다. 합산 도중 어딘가에서 더 적은 비트로 반올림되었습니다.",
    ),
    "store": msg(
        "you wrote outside out's M rows and N columns.",
        "out의 M개 행과 N개 열 바깥에 썼습니다.",
    ),
}
