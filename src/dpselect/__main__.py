"""The ``dpselect`` command: ``python -m dpselect`` and the console script run :func:`main`."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ._docstrings import fill_doc
from ._optional import MissingExtraError

__all__ = ["main"]


@fill_doc
def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line (:func:`dpselect.cli.main`); returns the exit status.

    Without the ``cli`` extra, prints one line naming it (``pip install "dpselect[cli]"``)
    on stderr and returns 2 instead of a traceback.

    %(cli_argv)s
    """
    try:
        from .cli import main as cli_main
    except MissingExtraError as exc:
        print(f"dpselect: error: {exc}", file=sys.stderr)
        return 2
    return cli_main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
