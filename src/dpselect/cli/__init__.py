"""Command-line interface (typer): ``dpselect reproduce | select | audit | demo | tdt | assoc | keys``.

* ``dpselect reproduce NAME [--quick] [--out DIR] [--data-dir DIR] [--scheduler ADDRESS] [--seed N] [--workers N]``
  runs a paper experiment (:mod:`dpselect.experiments`) on Dask and writes
  ``DIR/NAME/results.csv``, PNG figures and ``report.md`` (``all`` runs every
  experiment and also writes ``DIR/report.md``); the terminal gets plain text.
* ``dpselect select FILE --column NAME --epsilon E [...]`` privately picks a
  row of a CSV / Parquet file (scores with a public ``--sensitivity``, or
  counts), or the most frequent label of a column of raw labels among public
  ``--candidates``.
* ``dpselect audit MECHANISM --utility count [...]`` exactly audits a
  mechanism over all neighbours of small vectors of class counts.
* ``dpselect demo`` prints a comparison table on a synthetic problem.
* ``dpselect tdt FILE --epsilon E --k K [...]`` and ``dpselect assoc FILE
  --epsilon E --k K [--test allelic] [...]`` privately select the top-k SNPs
  of a trio or a case-control cohort and print only their public annotations.
* ``dpselect keys FILE --user-column U --key-column K --epsilon E --delta D
  [--max-contributions C] [--k K]`` prints the keys of a user–key table that may be
  released (partition selection; the k most frequent with ``--k``), keys only.

Nothing printed is computed from one record: every option is checked before a
data file is read or a random number drawn, and file errors name the file (and
a variant id), never a record's fields.  The options are checked by the
library's own parameter rules (:mod:`dpselect._params`) under the option's name;
:func:`main` is the one place that turns a user error (the rules' ``ValueError``
and ``TypeError``, unknown experiment, missing data, unreadable file, ...) into
one line ``dpselect: error: ...`` on stderr and exit status 2, without a
traceback.  ``main(argv)`` returns the exit status.

Needs the ``cli`` extra (``pip install "dpselect[cli]"``): importing this package
without typer raises an ImportError naming the extra, and the ``dpselect``
command (:func:`dpselect.__main__.main`) prints that message as one line.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence

from .._docstrings import fill_doc
from .._optional import MissingExtraError, require
from .._params import Rule, validate_params

require("typer", "cli", purpose="the dpselect command line")

import typer  # noqa: E402

from ._commands import add_commands, demo_table  # noqa: E402
from ._genomics import add_commands as add_genomics_commands  # noqa: E402
from ._input import CLIError  # noqa: E402
from ._keys import add_commands as add_keys_command  # noqa: E402

__all__ = ["app", "demo_table", "main"]


class _Command(typer.core.TyperCommand):
    """A command whose usage line names its arguments as the help lists them (``FILE``, not ``{file}``)."""

    def collect_usage_pieces(self, ctx: typer.Context) -> list[str]:  # type: ignore[override]
        pieces = super().collect_usage_pieces(ctx)
        return [p[1:-1].upper() if p.startswith("{") and p.endswith("}") else p for p in pieces]


def _build_app() -> typer.Typer:
    # Plain (click) help, not rich's boxes: at 80 columns rich cuts long option names
    # ("--non-private-candi..."), click puts their help on the next line.
    app = typer.Typer(
        name="dpselect",
        help="Differentially private selection: reproduce the papers' experiments, select, audit.",
        add_completion=False,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    )
    add_commands(app)
    add_genomics_commands(app)
    add_keys_command(app)
    for info in app.registered_commands:
        if info.cls in (None, typer.core.TyperCommand):
            info.cls = _Command
    return app


app = _build_app()


def _click_exception_types() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """(ClickException classes, Abort classes) of click and of typer's vendored copy (typer >= 0.25)."""
    errors: list[type[BaseException]] = []
    aborts: list[type[BaseException]] = []
    for modname in ("click.exceptions", "typer._click.exceptions"):
        try:
            mod = importlib.import_module(modname)
        except ImportError:
            continue
        if hasattr(mod, "ClickException"):
            errors.append(mod.ClickException)
        if hasattr(mod, "Abort"):
            aborts.append(mod.Abort)
    return tuple(errors), tuple(aborts)


def _error(msg: str) -> int:
    print(f"dpselect: error: {msg}", file=sys.stderr)
    return 2


def _argv(value: Sequence[str], name: str) -> list[str]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"{name} must be None or a sequence of str, got {type(value).__name__}")
    return [str(v) for v in value]


@validate_params({"argv": Rule("a sequence of str", check=_argv, none=True)})
@fill_doc
def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line on ``argv``; returns the exit status.

    The ``dpselect`` console script calls it through :func:`dpselect.__main__.main`.
    This is the one place where errors become messages: a user error prints one line
    ``dpselect: error: ...`` on stderr (status 2); an unexpected failure prints its
    exception type only (status 1; ``DPSELECT_DEBUG=1`` shows the traceback).

    %(cli_argv)s

    Examples
    --------
    >>> from dpselect.cli import main
    >>> main(["demo", "--epsilon", "-1"])
    2
    """
    click_errors, aborts = _click_exception_types()

    args = list(sys.argv[1:] if argv is None else argv)
    try:
        command = typer.main.get_command(app)
        result = command.main(args=args, prog_name="dpselect", standalone_mode=False)
    except aborts:
        return _error("aborted")
    except click_errors as exc:  # usage errors: bad option, missing argument, bad value
        if type(exc).__name__ == "NoArgsIsHelpError":  # the help was printed
            return 2
        fmt_message = getattr(exc, "format_message", None)
        message = fmt_message() if callable(fmt_message) else str(exc)
        return _error(str(message).replace("\n", " "))
    except (
        CLIError,
        MissingExtraError,
        ValueError,
        TypeError,
        FileNotFoundError,
        ConnectionError,
        NotImplementedError,
    ) as exc:  # FileNotFoundError includes the experiments' DataNotFoundError
        if os.environ.get("DPSELECT_DEBUG"):
            raise
        return _error(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    except KeyboardInterrupt:
        return _error("interrupted")
    except Exception as exc:  # an unexpected failure: still one line (DPSELECT_DEBUG=1 shows the traceback)
        if os.environ.get("DPSELECT_DEBUG"):
            raise
        # the exception's text is not shown: it could quote the data (DPSELECT_DEBUG=1 shows everything)
        print(
            f"dpselect: internal error: {type(exc).__name__} (set DPSELECT_DEBUG=1 for the message and the traceback)",
            file=sys.stderr,
        )
        return 1
    return result if isinstance(result, int) else 0
