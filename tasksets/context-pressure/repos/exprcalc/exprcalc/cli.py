"""Command line interface: ``python -m exprcalc``.

Examples::

    python -m exprcalc "ROUND(10 / 3, 2)"
    python -m exprcalc --var price=19.99 --var qty=3 "price * qty"
    python -m exprcalc --locale de "ROUND(2,567; 2)"
    python -m exprcalc --functions math
    python -m exprcalc --help-function XLOOKUP
    python -m exprcalc --script budget.calc
    python -m exprcalc                      # interactive prompt
"""

from __future__ import annotations

import argparse
import sys

from . import __version__
from .calculator import Calculator
from .errors import ExprError, render_error
from .functions import CATEGORIES, listing, functions_in


def _parse_var(text: str, calc: Calculator) -> tuple[str, object]:
    name, sep, formula = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"--var expects NAME=FORMULA, got {text!r}")
    return name.strip(), calc.evaluate(formula)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="exprcalc", description="Evaluate spreadsheet-style formulas.")
    parser.add_argument("formula", nargs="*", help="formula(s) to evaluate")
    parser.add_argument("--var", action="append", default=[], metavar="NAME=FORMULA",
                        help="define a variable before evaluating (repeatable)")
    parser.add_argument("--locale", help="number syntax locale, e.g. de for 1,5 and ';' separators")
    parser.add_argument("--degrees", action="store_true", help="trigonometry in degrees")
    parser.add_argument("--compat", choices=["v1"], help="use exprcalc 1.x function semantics")
    parser.add_argument("--thousands", action="store_true", help="group thousands in results")
    parser.add_argument("--script", metavar="FILE", help="run statements from FILE")
    parser.add_argument("--functions", nargs="?", const="all", metavar="CATEGORY",
                        help="list built-in functions (optionally one category)")
    parser.add_argument("--help-function", metavar="NAME", help="show help for one function")
    parser.add_argument("--version", action="version", version=f"exprcalc {__version__}")
    return parser


def repl(calc: Calculator, out=sys.stdout, inp=sys.stdin) -> int:
    """Minimal interactive loop: statements in, formatted results out."""
    for line in inp:
        line = line.strip()
        if not line:
            continue
        if line in ("quit", "exit"):
            break
        try:
            result = calc.execute(line)
        except ExprError as exc:
            print(render_error(line, exc), file=out)
            continue
        print(calc.format(result), file=out)
    return 0


def main(argv: list[str] | None = None, out=sys.stdout, err=sys.stderr) -> int:
    args = build_parser().parse_args(argv)
    if args.functions:
        if args.functions == "all":
            print(listing(), file=out)
        elif args.functions in CATEGORIES:
            for spec in functions_in(args.functions):
                print(f"{spec.signature:<48} {spec.summary}", file=out)
        else:
            print(f"unknown category {args.functions!r}; choose from {', '.join(CATEGORIES)}", file=err)
            return 2
        return 0
    calc = Calculator(
        locale=args.locale,
        angle_mode="degrees" if args.degrees else "radians",
        compat=args.compat,
    )
    if args.help_function:
        try:
            print(calc.help(args.help_function), file=out)
        except ExprError as exc:
            print(exc, file=err)
            return 2
        return 0
    try:
        for item in args.var:
            name, value = _parse_var(item, calc)
            calc.set(name, value)
        if args.script:
            with open(args.script, encoding="utf-8") as fh:
                source = fh.read()
            for value in calc.run(source):
                print(calc.format(value, args.thousands), file=out)
            return 0
        if not args.formula:
            return repl(calc, out)
        for formula in args.formula:
            print(calc.format(calc.evaluate(formula), args.thousands), file=out)
    except ExprError as exc:
        source = args.formula[-1] if args.formula else ""
        print(render_error(source, exc), file=err)
        return 1
    except argparse.ArgumentTypeError as exc:
        print(exc, file=err)
        return 2
    return 0
