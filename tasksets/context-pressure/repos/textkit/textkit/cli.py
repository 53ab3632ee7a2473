"""Command line interface: ``python -m textkit <command> ...``.

Commands::

    tokens    split text into words (or sentences with --sentences)
    slug      make a URL slug
    wrap      wrap, fill or justify text
    stem      Porter-stem words
    distance  edit distance or similarity of two strings
    md2txt    render Markdown as plain text
    sniff     guess the dialect of a CSV/TSV file

Text arguments may be given inline; ``-`` or a missing argument reads
standard input.  Every command returns exit status 0 on success, 1 on bad
input and 2 on usage errors.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Callable, Sequence

from . import __version__, distance
from .markdown import render
from .normalize import normalize
from .slugify import slugify
from .sniff import sniff
from .stem import stem
from .tokenize import split_sentences, word_tokenize
from .wrap import fill, justify

# Name -> (function, is_similarity).  Distances print as integers,
# similarities with four decimals.
METRICS: dict[str, tuple[Callable[[str, str], float], bool]] = {
    "levenshtein": (distance.levenshtein, False),
    "damerau": (distance.damerau_levenshtein, False),
    "hamming": (distance.hamming, False),
    "jaro": (distance.jaro, True),
    "jaro-winkler": (distance.jaro, True),
    "ratio": (distance.similarity, True),
}


def _read(value: str | None) -> str:
    if value is None or value == "-":
        return sys.stdin.read()
    return value


def _read_file(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def cmd_tokens(args: argparse.Namespace) -> int:
    text = _read(args.text)
    if args.normalize:
        text = normalize(text, lowercase=False)
    if args.sentences:
        for sentence in split_sentences(text):
            print(sentence)
        return 0
    tokens = word_tokenize(text, lowercase=args.lower)
    if args.json:
        print(json.dumps(tokens, ensure_ascii=False))
    else:
        print("\n".join(tokens))
    return 0


def cmd_slug(args: argparse.Namespace) -> int:
    print(slugify(_read(args.text), args.separator, max_length=args.max_length,
                  allow_unicode=args.unicode))
    return 0


def cmd_wrap(args: argparse.Namespace) -> int:
    text = _read_file(args.file)
    if args.justify:
        print(justify(text, args.width))
    else:
        paragraphs = [p for p in text.split("\n\n") if p.strip()]
        print("\n\n".join(fill(p, args.width, initial_indent=args.indent,
                               subsequent_indent=args.indent) for p in paragraphs))
    return 0


def cmd_stem(args: argparse.Namespace) -> int:
    words = args.words or _read(None).split()
    print(" ".join(stem(word) for word in words))
    return 0


def cmd_distance(args: argparse.Namespace) -> int:
    func, is_similarity = METRICS[args.metric]
    try:
        value = func(args.a, args.b)
    except ValueError as exc:
        print(f"textkit distance: {exc}", file=sys.stderr)
        return 1
    print(f"{value:.4f}" if is_similarity else str(value))
    return 0


def cmd_md2txt(args: argparse.Namespace) -> int:
    print(render(_read_file(args.file), width=args.width))
    return 0


def cmd_sniff(args: argparse.Namespace) -> int:
    dialect = sniff(_read_file(args.file))
    info = {
        "format": dialect.name,
        "delimiter": dialect.delimiter,
        "quotechar": dialect.quotechar,
        "has_header": dialect.has_header,
    }
    if args.json:
        print(json.dumps(info))
    else:
        for key, value in info.items():
            print(f"{key}: {value!r}" if isinstance(value, str) else f"{key}: {value}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="textkit", description="Text processing utilities.")
    parser.add_argument("--version", action="version", version=f"textkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("tokens", help="split text into tokens")
    p.add_argument("text", nargs="?")
    p.add_argument("--sentences", action="store_true", help="split into sentences instead")
    p.add_argument("--lower", action="store_true", help="lower-case the tokens")
    p.add_argument("--normalize", action="store_true", help="NFKC-normalise first")
    p.add_argument("--json", action="store_true", help="print a JSON list")
    p.set_defaults(func=cmd_tokens)

    p = sub.add_parser("slug", help="make a URL slug")
    p.add_argument("text", nargs="?")
    p.add_argument("--separator", default="-")
    p.add_argument("--max-length", type=int)
    p.add_argument("--unicode", action="store_true", help="keep non-ASCII letters")
    p.set_defaults(func=cmd_slug)

    p = sub.add_parser("wrap", help="wrap or justify text")
    p.add_argument("file", nargs="?", default="-")
    p.add_argument("-w", "--width", type=int, default=70)
    p.add_argument("--indent", default="")
    p.add_argument("--justify", action="store_true")
    p.set_defaults(func=cmd_wrap)

    p = sub.add_parser("stem", help="Porter-stem words")
    p.add_argument("words", nargs="*")
    p.set_defaults(func=cmd_stem)

    p = sub.add_parser("distance", help="distance or similarity of two strings")
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("-m", "--metric", choices=sorted(METRICS), default="levenshtein")
    p.set_defaults(func=cmd_distance)

    p = sub.add_parser("md2txt", help="render Markdown as plain text")
    p.add_argument("file", nargs="?", default="-")
    p.add_argument("-w", "--width", type=int)
    p.set_defaults(func=cmd_md2txt)

    p = sub.add_parser("sniff", help="guess the dialect of a delimited file")
    p.add_argument("file", nargs="?", default="-")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_sniff)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (OSError, ValueError) as exc:
        print(f"textkit {args.command}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
