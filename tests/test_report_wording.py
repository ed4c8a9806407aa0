"""Report cosmetics: captions say what the points are, links name no file type, a ratio says its direction.

* the percentile figure shows one exact value per setting: its caption does not promise error bars;
* the combined report's links go to report.md or (in the HTML page) report.html: the text names neither;
* "0.654 ± 0.044" is held together in the HTML tables (non-breaking spaces);
* the percentile claims say which mechanism is the numerator of the AEE ratio and which way is better.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("markdown_it")

from dpselect.experiments import percentile, report
from dpselect.experiments.html import markdown_to_html
from dpselect.experiments.tasks import ExperimentResult


def test_percentile_caption_promises_no_error_bars():
    note = percentile.FIGURE_NOTE
    assert "exact" in note and "no error bars" in note
    assert "standard deviation" not in note and "±" not in note


def test_combined_report_link_text_names_no_file_type(tmp_path):
    res = ExperimentResult("percentile", [], [], tmp_path, [], 1, 0.1)
    text = report.combined_report([res], quick=True, seed=0, seconds=1.0, data_dir=None)
    assert "[percentile](percentile/report.md)" in text and "`percentile/report.md`" not in text
    html = markdown_to_html(text, Path("."))
    assert '<a href="percentile/report.html">percentile</a>' in html


def test_mean_and_spread_never_wrap_in_html_tables():
    html = markdown_to_html("| a | b |\n|---|---|\n| x | 0.654 ± 0.044 |\n", Path("."))
    assert "0.654\u00a0±\u00a00.044" in html and "0.654 ± " not in html


def test_aee_ratio_says_which_way_it_runs():
    rows = [
        {"dataset": "d", "p": 50, "epsilon": eps, "mechanism": m, "aee": aee}
        for eps in (1.0, 10.0)
        for m, aee in (("EM", 2.0), ("PF", 1.0), ("SNM-T", 0.5), ("SNM-T (paper)", 0.5), ("SNM-LAP", 3.0))
    ] + [{"dataset": "d", "p": 50, "epsilon": e, "mechanism": percentile.BEST_SOUND, "aee": 0.25} for e in (1.0, 10.0)]
    claims = percentile.claims(rows)
    first = claims[0].ours
    assert f"median AEE ratio {percentile.BEST_SOUND} / paper's = 0.5 (below 1: {percentile.BEST_SOUND} more" in first
    snm = next(c.ours for c in claims[1:] if "SNM-T has" in c.text)
    assert "median AEE ratio SNM-T / best of EM, PF = 0.5 (below 1: SNM-T more accurate)" in snm
