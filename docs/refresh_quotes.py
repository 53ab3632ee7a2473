"""Regenerate (or check) the verdict lines README.md quotes from the results folder they quote.

    .venv/bin/ctxbench run quickstart --output /tmp/qs            # the run the README quotes
    .venv/bin/python docs/refresh_quotes.py /tmp/qs               # rewrite the README's quickstart block
    .venv/bin/python docs/refresh_quotes.py /tmp/qs --check       # exit 1, with a diff, when it is stale

The blocks are marked in the page by `<!-- quoted verdicts: EXPERIMENT vs REFERENCE: STRATEGY... -->`
and `<!-- end of quoted verdicts -->` (see ctxbench.reports.quoted); .ci/run runs the check.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from ctxbench.harness.errors import InputError
from ctxbench.reports.quoted import refresh

README = Path(__file__).resolve().parent.parent / "README.md"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path, help="the results folder the page quotes (with its report.md)")
    parser.add_argument("--page", type=Path, default=README, help="the Markdown page (default: README.md)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when the page is stale")
    args = parser.parse_args(argv)
    page = args.page.read_text(encoding="utf-8")
    try:
        fresh = refresh(page, args.run_dir)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not args.check:
        if fresh != page:
            args.page.write_text(fresh, encoding="utf-8")
        print(f"{args.page}: {'refreshed' if fresh != page else 'already true'}")
        return 0
    if fresh == page:
        return 0
    sys.stdout.writelines(difflib.unified_diff(page.splitlines(True), fresh.splitlines(True), str(args.page),
                                               f"{args.page} from {args.run_dir}"))
    print(f"{args.page} quotes verdicts {args.run_dir} no longer gives: run "
          f"`python docs/refresh_quotes.py {args.run_dir}` and commit the page", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
