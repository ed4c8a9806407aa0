"""Compact annotations and counts of the PLINK reader: the .bim tokeniser, TransmissionCounts' storage, count dtypes."""

from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
import pytest

from dpselect.apps.genomics import TransmissionCounts, simulate_trios, transmission_counts
from dpselect.apps.genomics._io import _plink
from dpselect.apps.genomics._io._chromosomes import chromosome_kind
from dpselect.apps.genomics._io._packed import TrioPlan, count_packed


def _split_reference(text: bytes) -> list[list[str]]:
    """The columns of a .bim by Python's own split (the rule the NumPy tokeniser must reproduce)."""
    rows = [line.split() for line in text.splitlines() if line.strip()]
    return [[r[j].decode() for r in rows] for j in range(6)]


def _random_bim(rng: np.random.Generator, n: int) -> bytes:
    lines = []
    for i in range(n):
        seps = [str(rng.choice([" ", "\t", "  ", " \t "])) for _ in range(5)]
        toks = [
            str(rng.choice(["1", "23", "X", "chr7", "MT"])),
            "rs" + "x" * int(rng.integers(0, 12)) + str(i),
            str(int(rng.integers(0, 3))),
            str(int(rng.integers(-5, 10**9))),
            str(rng.choice(["A", "C", "ACGT", "<DEL>", "-"])),
            str(rng.choice(["G", "T", "TT"])),
        ]
        lead, trail = str(rng.choice(["", " ", "\t"])), str(rng.choice(["", " ", "\r"]))
        lines.append(lead + "".join(t + s for t, s in zip(toks, [*seps, ""])) + trail)
        if rng.random() < 0.1:
            lines.append(str(rng.choice(["", "  ", "\t"])))
    return (str(rng.choice(["\n", "\r\n"])).join(lines) + str(rng.choice(["", "\n", "\n\n"]))).encode()


@pytest.mark.parametrize("block", [7, 64, 1 << 18])
def test_read_bim_equals_python_split_on_random_files(tmp_path, monkeypatch, block):
    # blocks of 7 bytes cut every line several times: the reader must carry partial lines across reads
    monkeypatch.setattr(_plink, "_BIM_BLOCK", block)
    rng = np.random.default_rng(block)
    for trial in range(40):
        text = _random_bim(rng, int(rng.integers(1, 80)))
        path = tmp_path / f"t{trial}.bim"
        path.write_bytes(text)
        got = _plink.read_bim(path)
        chrom, snp, _, pos, a1, a2 = _split_reference(text)
        assert got["pos"].dtype == np.int64 and got["pos"].tolist() == [int(p) for p in pos]
        for name, want in (("chrom", chrom), ("snp", snp), ("a1", a1), ("a2", a2)):
            assert got[name].dtype.kind == "S" and got[name].astype(str).tolist() == want, (name, text[:120])


def test_read_bim_holds_one_byte_per_character(tmp_path):
    path = tmp_path / "w.bim"
    path.write_text("".join(f"1\trs{i:06d}\t0\t{i}\tA\tG\n" for i in range(1000)))
    got = _plink.read_bim(path)
    assert {k: v.dtype.str for k, v in got.items()} == {
        "chrom": "|S1",
        "snp": "|S8",
        "pos": "<i8",
        "a1": "|S1",
        "a2": "|S1",
    }


@pytest.mark.parametrize(
    "text,match",
    [
        (b"1 rs1 0 1 A G\n1 rs2 0 2 A G C\n1 rs3 0 3 A\n", "line 2 has 7 columns, expected 6"),
        (b"1 rs1 0 1 A G\n1 rs2 0 2 A\n", "line 2 has 5 columns, expected 6"),
        (b"1 rs1 0 1.5 A G\n", "non-integer position"),
        (b"1 rs1 0 99999999999999999999 A G\n", "non-integer position"),
        (b"\n  \n", "is empty"),
    ],
)
def test_read_bim_rejects_bad_files_naming_the_path(tmp_path, text, match):
    # 7 + 5 tokens on two lines make 12 = 2 x 6: a token count alone would misalign every column after line 2
    path = tmp_path / "bad.bim"
    path.write_bytes(text)
    with pytest.raises(ValueError, match="path: .*" + match):
        _plink.read_bim(path)


def _counts(**text):
    cols = {
        "snp_ids": ["rs1", "rs2", "rs3"],
        "chrom": ["1", "23", "X"],
        "a1": ["A", "C", "ACGT"],
        "a2": ["G", "T", "-"],
    }
    cols.update(text)
    b = np.array([3, 0, 7])
    return TransmissionCounts(
        b,
        b + 1,
        9,
        snp_ids=cols["snp_ids"],
        chrom=cols["chrom"],
        pos=np.array([10, 20, 30]),
        a1=cols["a1"],
        a2=cols["a2"],
    )


def test_transmission_counts_text_is_str_arrays_held_as_bytes():
    got = _counts()
    assert got.snp_ids.dtype.kind == "U" and got.snp_ids.tolist() == ["rs1", "rs2", "rs3"]
    assert (got.chrom == "23").tolist() == [False, True, False] and got.a1.tolist() == ["A", "C", "ACGT"]
    assert got.snp_ids is got.snp_ids  # decoded once, then kept
    assert got.annotations([2, 0]) == [("X", "rs3", 30, "ACGT", "-"), ("1", "rs1", 10, "A", "G")]
    assert got.annotations() == list(zip(got.chrom, got.snp_ids, got.pos.tolist(), got.a1, got.a2))
    assert all(type(v) is str for row in got.annotations() for v in row[:2] + row[3:])
    assert "rs1" not in repr(got) and "7" not in repr(got)  # the counts are private: repr shows sizes only
    with pytest.raises(AttributeError, match="immutable"):
        got.b = np.zeros(3)  # type: ignore[misc]
    with pytest.raises(AttributeError, match="immutable"):
        got.snp_ids = np.array(["x"])  # type: ignore[misc]
    for other in (pickle.loads(pickle.dumps(got)), copy.deepcopy(got)):
        assert other.annotations() == got.annotations() and other.b.tolist() == got.b.tolist()


def test_transmission_counts_keeps_non_ascii_text():
    got = _counts(snp_ids=np.array(["rs1", "räs2", "rs3"]), a2=np.array([b"G", "é".encode(), b"-"]))
    assert got.snp_ids.tolist() == ["rs1", "räs2", "rs3"] and got.a2.tolist() == ["G", "é", "-"]
    assert got.annotations([1])[0][1] == "räs2"
    with pytest.raises(ValueError, match="a1: text is neither ASCII nor UTF-8"):
        _counts(a1=np.array([b"A", b"\xff", b"C"]))


def test_plink_reader_non_ascii_bim_reads_as_utf8(tmp_path):
    prefix = tmp_path / "u"
    simulate_trios(prefix, 5, 3, causal=0, rng=0)
    bim = prefix.with_suffix(".bim")
    bim.write_bytes(bim.read_bytes().replace(b"rs1", "rs1é".encode()))
    got = transmission_counts(prefix)
    assert got.snp_ids.tolist() == ["rs0", "rs1é", "rs2"]


def test_chromosome_kind_by_runs_equals_per_code_naming():
    rng = np.random.default_rng(0)
    names = ["1", "chr7", "X", "23", "chrX", "Y", "24", "XY", "25", "PAR1", "MT", "M", "26", "chrMT", "GL000192.1"]
    kind = {
        "1": "A",
        "chr7": "A",
        "X": "X",
        "23": "X",
        "chrX": "X",
        "Y": "Y",
        "24": "Y",
        "XY": "XY",
        "25": "XY",
        "PAR1": "XY",
        "MT": "MT",
        "M": "MT",
        "26": "MT",
        "chrMT": "MT",
        "GL000192.1": "A",
    }
    codes = np.repeat(rng.choice(names, 200), rng.integers(1, 5, 200))  # runs of equal codes, unsorted
    want = [kind[c] for c in codes]
    assert chromosome_kind(codes).tolist() == want
    assert chromosome_kind(codes.astype(np.bytes_)).tolist() == want
    assert chromosome_kind(list(codes)).tolist() == want and chromosome_kind([]).size == 0


def _record(trio_codes: tuple[int, int, int], n_trios: int) -> bytes:
    """One SNP-major .bed record: every trio (father, mother, child in file order) with the same raw codes."""
    codes = np.tile(np.array(trio_codes, dtype=np.uint8), n_trios)
    codes = np.concatenate([codes, np.zeros(-codes.size % 4, dtype=np.uint8)]).reshape(-1, 4)
    return (codes[:, 0] | codes[:, 1] << 2 | codes[:, 2] << 4 | codes[:, 3] << 6).astype(np.uint8).tobytes()


@pytest.mark.parametrize("n_trios", [127, 128, 200])
def test_counts_exact_at_the_count_dtype_boundary(tmp_path, n_trios):
    # every parent heterozygous (code 10) and every child homozygous: b (or c) = 2 n, above uint8 from 128 trios
    prefix = tmp_path / f"all{n_trios}"
    prefix.with_suffix(".fam").write_text(
        "".join(f"F{t} fa{t} 0 0 1 1\nF{t} mo{t} 0 0 2 1\nF{t} ch{t} fa{t} mo{t} 1 2\n" for t in range(n_trios))
    )
    prefix.with_suffix(".bim").write_text("1 s0 0 1 A G\n1 s1 0 2 A G\n")
    prefix.with_suffix(".bed").write_bytes(
        bytes((0x6C, 0x1B, 0x01)) + _record((0b10, 0b10, 0b00), n_trios) + _record((0b10, 0b10, 0b11), n_trios)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = transmission_counts(prefix, chunk_snps=1)
    assert got.b.dtype == got.c.dtype == got.mendel_errors.dtype == np.int64
    assert got.b.tolist() == [2 * n_trios, 0] and got.c.tolist() == [0, 2 * n_trios]
    assert got.mendel_errors.tolist() == [0, 0]


def test_count_packed_adds_into_a_small_dtype_exactly():
    rng = np.random.default_rng(4)
    n_trios, k = 130, 25
    records = rng.integers(0, 256, size=(k, (3 * n_trios + 3) // 4), dtype=np.uint8)
    plan = TrioPlan.from_rows(rng.permutation(3 * n_trios).reshape(n_trios, 3), rng.random(n_trios) < 0.5)
    x_mask = rng.random(k) < 0.3
    want = count_packed(records, plan, x_mask)
    small = count_packed(records, plan, x_mask, out=np.zeros((3, k), dtype=np.min_scalar_type(2 * n_trios)))
    assert small.dtype == np.uint16
    np.testing.assert_array_equal(small, want)


def test_skipped_snps_across_chunks_keep_the_counts_in_order(tmp_path):
    prefix = tmp_path / "skip"
    simulate_trios(prefix, 40, 30, causal=[4], effect=0.9, rng=6)
    full = transmission_counts(prefix)
    bim = prefix.with_suffix(".bim")
    rows = bim.read_text().splitlines()
    skip = {0, 5, 6, 7, 13, 29}
    bim.write_text("".join(("Y" if j in skip else "1") + ln[1:] + "\n" for j, ln in enumerate(rows)))
    kept = [j for j in range(30) if j not in skip]
    # threads write into the result in place; other schedulers return blocks that are joined
    for scheduler in (None, "processes"):
        with pytest.warns(UserWarning, match=r"skipped 6 SNP\(s\)"):
            got = transmission_counts(prefix, chunk_snps=4, scheduler=scheduler)
        assert got.snp_ids.tolist() == [f"rs{j}" for j in kept]
        for name in ("b", "c", "mendel_errors"):
            np.testing.assert_array_equal(getattr(got, name), getattr(full, name)[kept])
