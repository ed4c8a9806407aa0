"""report.html: markdown rendering, embedded figures, and a real render in headless Chromium."""

from __future__ import annotations

import base64
import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from dpselect.experiments import html, report
from dpselect.experiments.tasks import Claim, ExperimentResult

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# appended to a copy of the page: lists every image's natural size once the page has loaded
PROBE = (
    '<script>window.addEventListener("load", function () {var r = [];'
    'document.querySelectorAll("img").forEach(function (i) {r.push([i.naturalWidth, i.naturalHeight]);});'
    'var p = document.createElement("pre"); p.id = "probe"; p.textContent = JSON.stringify(r);'
    "document.body.appendChild(p);});</script>"
)


def _figure(path: Path, width: float) -> Path:
    from dpselect.experiments._plotting import new_figure, save_figure

    fig, axes = new_figure(1, 1, width=width)
    axes[0, 0].plot([1, 2, 3], [3, 1, 2])
    return save_figure(fig, path)


def test_markdown_subset_is_rendered_and_escaped(tmp_path):
    png = _figure(tmp_path / "f.png", 3.0)
    md = (
        "# Title <x>\n\nSome `code`, *em* and **bold**; [a link](other.md), [report](x/report.md).\n\n"
        "- item 1\n- item 2\n\n"
        "| a | b \\| c | ✓/✗ |\n|---|---|:-:|\n| 1 <br>*note* | 2 | ✓ |\n\n![f](f.png)\n"
    )
    out = html.markdown_to_html(md, tmp_path).replace("\n", "")
    assert "<h1>Title &lt;x&gt;</h1>" in out
    assert "<code>code</code>" in out and "<em>em</em>" in out and "<strong>bold</strong>" in out
    assert '<a href="other.html">a link</a>' in out and '<a href="x/report.html">report</a>' in out
    assert "<ul><li>item 1</li><li>item 2</li></ul>" in out
    assert "<th>b | c</th>" in out and '<td style="text-align:center">✓</td>' in out
    assert "1 <br><em>note</em>" in out
    src = re.search(r'src="data:image/png;base64,([^"]+)"', out).group(1)
    assert base64.b64decode(src) == png.read_bytes()


def test_combined_report_counts_and_defines_abbreviations(tmp_path):
    claims = [
        Claim("EM beats PF", "1", "2", True),
        Claim("SNM-T", "3", "4", False),
        Claim("x", "5", "6", None),
        Claim("y", "7", "8", None),
    ]
    res = ExperimentResult("percentile", [], claims, tmp_path, [], 1, 0.1, data_files=[tmp_path / "d" / "H.npy"])
    text = report.combined_report([res], quick=True, seed=0, seconds=1.0, data_dir=tmp_path / "d")
    assert "4 claims of the papers: 1 reproduced (✓), 1 not reproduced (✗), 2 not evaluated (–)." in text
    assert "| percentile | 1 | 1 | 2 | 0 | 0 | files read under" in text and "`H.npy`" in text
    abbrev = text.split("## Abbreviations", 1)[1]
    assert "**EM**" in abbrev and "**PF**" in abbrev and "**SNM-T**" in abbrev
    assert "**LD**" not in abbrev  # only the abbreviations the report uses
    assert report.data_line([], tmp_path).endswith(f"(the data directory `{tmp_path}` was not read by this experiment)")


def _chromium_image_sizes(page: Path, tmp_path: Path) -> list[tuple[int, int]]:
    """Natural sizes of every <img> of ``page`` once Chromium has loaded it (headless)."""
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    proc = subprocess.run(
        [
            str(CHROMIUM),
            *CHROMIUM_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            "--virtual-time-budget=5000",
            "--dump-dom",
            probe.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    m = re.search(r'<pre id="probe">([^<]*)</pre>', proc.stdout)
    assert m is not None, proc.stderr[-2000:]
    return [tuple(s) for s in json.loads(m.group(1))]


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (/usr/bin/chromium)")
def test_report_html_renders_every_figure_in_chromium(tmp_path):
    from PIL import Image

    figs = [_figure(tmp_path / "wide.png", 6.0), _figure(tmp_path / "narrow.png", 3.0)]
    md = "# Report\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n" + "\n".join(f"![{f.stem}]({f.name})" for f in figs)
    page = html.write_html(tmp_path / "report.html", "t", [(md, tmp_path), ("## Part two\n\n![w](wide.png)", tmp_path)])
    assert "wide.png)" not in page.read_text(encoding="utf-8")  # images embedded, not linked
    expected = [Image.open(f).size for f in figs] + [Image.open(figs[0]).size]
    assert _chromium_image_sizes(page, tmp_path) == expected  # every figure decoded at its own size


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (/usr/bin/chromium)")
def test_reproduced_report_html_renders_every_figure(tmp_path, monkeypatch):
    from PIL import Image

    from dpselect.experiments import percentile, runner

    monkeypatch.setattr(percentile, "DATASETS", ("HEPTH", "INCOME"))
    monkeypatch.setattr(percentile, "PERCENTILES", (90,))
    monkeypatch.setattr(percentile, "epsilons", lambda quick: [1.0, 10.0])
    res = runner.reproduce("percentile", quick=True, out=tmp_path / "out", workers=1, progress=False)
    md = (res.out_dir / "report.md").read_text(encoding="utf-8")
    pngs = [res.out_dir / name for name in re.findall(r"^!\[[^\]]*\]\(([^)]+)\)$", md, flags=re.M)]
    assert pngs and sorted(pngs) == sorted(res.out_dir.glob("*.png"))
    sizes = _chromium_image_sizes(res.out_dir / "report.html", tmp_path)
    assert sizes == [Image.open(p).size for p in pngs] and all(w > 0 and h > 0 for w, h in sizes)


def test_code_spans_wrapping_across_lines_render_as_code(tmp_path):
    out = html.markdown_to_html("A ``long code\nspan`` that wraps, and `x`.\n", tmp_path)
    assert "<code>long code span</code>" in out and "``" not in out


def test_new_findings_are_marked_and_counted_apart(tmp_path):
    claims = [
        Claim("paper claim", "1", "2", True),
        Claim("new finding", "3", "not in the paper", True, kind="new"),
        Claim("new, fails", "3", "not in the paper", False, kind="new"),
    ]
    table = report.claims_table(claims)
    assert "| ✓ |" in table and "| + |" in table and "| ○ |" in table and "✗" not in table
    line = report.count_line(claims)
    assert line.startswith("1 claims of the papers: 1 reproduced (✓)")
    assert "2 new findings (baselines the papers do not have): 1 hold (+), 1 do not hold (○)" in line
    with pytest.raises(ValueError, match="kind"):
        Claim("x", "1", "2", True, kind="other")


def test_error_bars_are_clipped_to_the_metric_range():
    from dpselect.experiments._plotting import accuracy_panel, new_figure

    _, axes = new_figure(1, 1)
    accuracy_panel(axes[0, 0], [0.1, 1.0], {"a": ([0.95, 0.05], [0.2, 0.2])}, log_x=False)
    segments = axes[0, 0].containers[0].lines[2][0].get_segments()
    ys = np.array([seg[:, 1] for seg in segments])
    assert ys.min() >= 0.0 and ys.max() <= 1.0
    assert np.allclose(ys, [[0.75, 1.0], [0.0, 0.25]])


def test_every_figure_caption_says_what_the_error_bars_are():
    from dpselect.experiments import tdt as tdt_experiment

    assert "standard deviation" in report.DEFAULT_FIGURE_NOTE and "clipped" in report.DEFAULT_FIGURE_NOTE
    assert "standard deviation" in tdt_experiment.FIGURE_NOTE
