"""Public per-SNP annotations (CHR, SNP, BP, A1, A2) shared by the counts containers.

The text columns are held as ASCII bytes (``S``, a quarter of the memory of
``str``) when they are ASCII; the ``str`` arrays are made on first access
(then kept) and :meth:`Annotated.annotations` decodes only the rows asked for.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["Annotated", "compact_text", "default_annotations"]

#: The text annotation columns, in the order the containers' constructors take them.
TEXT = ("snp_ids", "chrom", "a1", "a2")


def compact_text(values: Any, name: str) -> np.ndarray:
    """A text column kept as ASCII bytes (``S``, 1 byte a character) when it is ASCII, else as ``str`` (``U``)."""
    a = np.asarray(values)
    if a.dtype.kind == "S":
        raw = np.ascontiguousarray(a).view(np.uint8)
        if raw.size == 0 or int(raw.max()) < 128:
            return a
        try:
            return np.strings.decode(a, "utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"{name}: text is neither ASCII nor UTF-8") from None
    if a.dtype.kind != "U":
        a = a.astype(str)
    try:
        return a.astype(np.bytes_)  # ASCII only: 4x smaller than str
    except UnicodeEncodeError:
        return a


def _text_column(x: Any, name: str, m: int, default: Any) -> Any:
    if x is None:
        return default
    a = np.asarray(x)
    if a.shape != (m,):
        raise ValueError(f"{name} must have length {m} (one per SNP), got shape {a.shape}")
    return a


def default_annotations(
    m: int, snp_ids: Any, chrom: Any, pos: Any, a1: Any, a2: Any
) -> tuple[Any, Any, np.ndarray, Any, Any]:
    """Checked annotation columns of m SNPs; None gives ``snp0, snp1, ...``, chromosome "0", position 0, "1" / "2"."""
    if pos is None:
        pos_arr = np.zeros(m, dtype=np.int64)
    else:
        pos_arr = np.asarray(pos)
        if pos_arr.shape != (m,) or not np.issubdtype(pos_arr.dtype, np.integer):
            raise ValueError(f"pos must be {m} integers (one per SNP)")
        pos_arr = pos_arr.astype(np.int64)
    pos_arr.flags.writeable = False
    return (
        _text_column(snp_ids, "snp_ids", m, np.char.add("snp", np.arange(m).astype(str))),
        _text_column(chrom, "chrom", m, np.full(m, "0")),
        pos_arr,
        _text_column(a1, "a1", m, np.full(m, "1")),
        _text_column(a2, "a2", m, np.full(m, "2")),
    )


def _text_property(name: str, doc: str) -> property:
    """The read-only text column ``name`` of :class:`Annotated`, decoded to ``str`` on first use."""

    def get(self: Annotated) -> np.ndarray:
        return self._column(name)

    return property(get, doc=doc)


class Annotated:
    """Immutable base: ``pos`` and the text columns ``snp_ids``, ``chrom``, ``a1``, ``a2`` of m SNPs."""

    __slots__ = ("_decoded", "_text", "pos")
    pos: np.ndarray
    _text: dict[str, np.ndarray]
    _decoded: dict[str, np.ndarray]

    def _init_annotations(self, snp_ids: Any, chrom: Any, pos: Any, a1: Any, a2: Any) -> None:
        """Set the columns (None: the defaults ``snp0, snp1, ...``, "0", 0, "1", "2"), m from ``pos``'s length."""
        init = object.__setattr__
        init(self, "pos", pos)
        init(self, "_text", {name: compact_text(v, name) for name, v in zip(TEXT, (snp_ids, chrom, a1, a2))})
        init(self, "_decoded", {})

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot delete {name!r}")

    def _column(self, name: str) -> np.ndarray:
        out = self._decoded.get(name)
        if out is None:
            raw = self._text[name]
            out = raw.astype(str) if raw.dtype.kind == "S" else raw
            self._decoded[name] = out
        return out

    snp_ids = _text_property("snp_ids", "SNP ids (``str`` array).")
    chrom = _text_property("chrom", "Chromosome codes (``str`` array).")
    a1 = _text_property("a1", "Allele 1, the allele the counts count (``str`` array).")
    a2 = _text_property("a2", "Allele 2 (``str`` array).")

    def annotations(self, indices: ArrayLike | None = None) -> list[tuple[str, str, int, str, str]]:
        """(CHR, SNP, BP, A1, A2) rows of the SNPs at ``indices`` (all by default): public columns only.

        Parameters
        ----------
        indices : array-like of int, default=None
            The SNPs (all when None).

        Returns
        -------
        list of (str, str, int, str, str)
            One row per SNP.
        """
        idx = np.arange(self.pos.size) if indices is None else np.asarray(indices, dtype=np.int64).ravel()
        cols = [self._text[name][idx] for name in ("chrom", "snp_ids", "a1", "a2")]
        chrom, snp, a1, a2 = (col.astype(str).tolist() if col.dtype.kind == "S" else col.tolist() for col in cols)
        return list(zip(chrom, snp, self.pos[idx].tolist(), a1, a2))
