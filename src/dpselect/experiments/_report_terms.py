"""The vocabulary of the reproduction reports: the abbreviations and the glossary of the papers' terms.

:data:`ABBREVIATIONS` and :data:`GLOSSARY` say what the reports' short names and the claims'
terms mean; :func:`claim_gloss` and :func:`abbreviations_used` find those a text uses.
Behind :mod:`dpselect.experiments.report`, which re-exports the public names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from .tasks import Claim

__all__ = ["ABBREVIATIONS", "GLOSSARY", "abbreviations_used", "claim_gloss"]

#: Abbreviations of the reports (experiments may add their own with a module-level ``ABBREVIATIONS`` dict).
ABBREVIATIONS: dict[str, str] = {
    "DP": "differential privacy; (eps, delta)-DP is approximate DP, eps-DP (delta = 0) pure DP",
    "eps": "epsilon, the privacy-loss budget",
    "EM": "exponential mechanism (McSherry & Talwar 2007)",
    "PF": "permute-and-flip (McKenna & Sheldon 2020)",
    "RNM": "report noisy max",
    "LD": "local dampening (Farias et al. 2020)",
    "SNM": "smooth noisy max (Chaves et al.): report-noisy-max with noise scaled by smooth sensitivity",
    "SNM-T": "smooth noisy max with Student's t noise",
    "SNM-LAP": "smooth noisy max with Laplace noise",
    "SNM-LLN": "smooth noisy max with Laplace-log-normal noise",
    "SPS": "smooth private selection (Yamamoto & Shibuya)",
    "AEE": "absolute expected error, E|output - true value| (exact, from the output distribution)",
    "TDT": "transmission disequilibrium test (family-based genome-wide association)",
    "SNP": "single-nucleotide polymorphism",
    "Duff": "dataset-distance exponential mechanism for medians (Gillenwater & Muñoz Medina 2021)",
    "SmoothSens": "smooth-sensitivity noise addition (Nissim, Raskhodnikova & Smith 2007)",
    "LaplaceLN": "Laplace-log-normal noise with smooth sensitivity (Bun & Steinke 2019)",
    "CV": "cross-validation",
    "PTR": "propose-test-release",
}


#: One-line meanings of the papers' terms that claims cite (the claim's gloss, after the abbreviations).
GLOSSARY: dict[str, str] = {
    "Thm 3 split": "Yamamoto & Shibuya's split of the budget between the selection and its noise "
    "(k + (m-1) l/2 = 1), which their supplement retracts",
    "Thm 4": "Yamamoto & Shibuya's exact smooth sensitivity of the TDT statistic",
    "Thm 5": "Yamamoto & Shibuya's cheaper smooth bound on the TDT statistic's sensitivity",
    "SPS IV": "smooth private selection with the Thm 5 bound, one-sided noise (the paper's best case)",
    "ND-PF": "permute-and-flip on the neighbour distance: how many families must change before a SNP is the top",
    "case IV vs II": "the one-sided selections with the Thm 5 and the Thm 4 bound",
    "Table II": "the paper's worked example on six real SNPs",
    "Fig.": "the paper's figure with the claimed result",
}


def claim_gloss(claim: Claim) -> str:
    """One line saying what the claim's terms mean (those of :data:`GLOSSARY` and :data:`ABBREVIATIONS`).

    Parameters
    ----------
    claim : Claim
        The claim whose text is scanned for the terms.

    Returns
    -------
    str
        ``"term: meaning; ..."`` in the order the terms occur ("" if none does).

    Examples
    --------
    >>> claim_gloss(Claim("PF beats EM", "1", "2", True))
    'PF: permute-and-flip (McKenna & Sheldon 2020); EM: exponential mechanism (McSherry & Talwar 2007)'
    """
    terms = {**GLOSSARY, **{k: v for k, v in ABBREVIATIONS.items() if k not in ("eps", "DP")}}
    text = claim.text
    found = [
        (m.start(), k) for k in terms for m in [re.search(rf"(?<![\w-]){re.escape(k)}(?![\w-])", text)] if m is not None
    ]
    # a term inside a longer term that is glossed too ("Thm 5" in "SPS IV"'s gloss) is said once
    chosen = [k for _, k in sorted(found) if not any(k != o and k in o for _, o in found)]
    return "; ".join(f"{k}: {terms[k]}" for k in chosen)


def abbreviations_used(text: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The abbreviations (of :data:`ABBREVIATIONS` and ``extra``) that occur in ``text`` as words.

    Parameters
    ----------
    text : str
        The text scanned.
    extra : mapping of str to str or None, default=None
        More abbreviations (an experiment's ``ABBREVIATIONS``).

    Returns
    -------
    dict of str to str
        Abbreviation -> meaning, sorted case-insensitively.

    Examples
    --------
    >>> list(abbreviations_used("PF and EM at eps = 1"))
    ['EM', 'eps', 'PF']
    """
    table = {**ABBREVIATIONS, **(extra or {})}
    return {
        k: v
        for k, v in sorted(table.items(), key=lambda kv: kv[0].lower())
        if re.search(rf"(?<![\w-]){re.escape(k)}(?![\w])", text)
    }
