"""Tests for the textkit command line."""

import io
import json

import pytest

from textkit import __version__
from textkit.cli import METRICS, build_parser, main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"textkit {__version__}"


def test_command_required(capsys):
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2


def test_tokens(capsys):
    code, out, _ = run(capsys, "tokens", "Don't stop!")
    assert code == 0
    assert out.splitlines() == ["Do", "n't", "stop", "!"]


def test_tokens_json_lower(capsys):
    code, out, _ = run(capsys, "tokens", "--json", "--lower", "Hello World")
    assert json.loads(out) == ["hello", "world"]


def test_tokens_sentences(capsys):
    code, out, _ = run(capsys, "tokens", "--sentences", "Hi there. Bye now.")
    assert out.splitlines() == ["Hi there.", "Bye now."]


def test_tokens_from_stdin(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("a b"))
    code, out, _ = run(capsys, "tokens")
    assert out.splitlines() == ["a", "b"]


def test_slug(capsys):
    code, out, _ = run(capsys, "slug", "Crème Brûlée & Co.", "--max-length", "12")
    assert out.strip() == "creme-brulee"


def test_slug_separator(capsys):
    code, out, _ = run(capsys, "slug", "--separator", "_", "Hello World")
    assert out.strip() == "hello_world"


def test_wrap_file(capsys, tmp_path):
    path = tmp_path / "fox.txt"
    path.write_text("The quick brown fox jumps over the lazy dog\n\nSecond paragraph here\n")
    code, out, _ = run(capsys, "wrap", str(path), "--width", "15")
    assert out == "The quick brown\nfox jumps over\nthe lazy dog\n\nSecond\nparagraph here\n"


def test_wrap_justify(capsys, tmp_path):
    path = tmp_path / "fox.txt"
    path.write_text("The quick brown fox jumps over the lazy dog")
    code, out, _ = run(capsys, "wrap", str(path), "-w", "16", "--justify")
    assert out.splitlines()[0] == "The  quick brown"


def test_stem(capsys):
    code, out, _ = run(capsys, "stem", "caresses", "ponies", "running")
    assert out.strip() == "caress poni run"


@pytest.mark.parametrize(
    "metric,a,b,expected",
    [
        ("levenshtein", "kitten", "sitting", "3"),
        ("damerau", "ab", "ba", "1"),
        ("jaro", "MARTHA", "MARHTA", "0.9444"),
        ("ratio", "abcd", "abcf", "0.7500"),
    ],
)
def test_distance(capsys, metric, a, b, expected):
    code, out, _ = run(capsys, "distance", "--metric", metric, a, b)
    assert code == 0
    assert out.strip() == expected


def test_distance_default_metric(capsys):
    code, out, _ = run(capsys, "distance", "flaw", "lawn")
    assert out.strip() == "2"


def test_distance_error(capsys):
    code, out, err = run(capsys, "distance", "-m", "hamming", "a", "abc")
    assert code == 1
    assert "equal lengths" in err


def test_metric_choices():
    parser = build_parser()
    args = parser.parse_args(["distance", "-m", "jaro-winkler", "a", "b"])
    assert args.metric == "jaro-winkler"
    assert set(METRICS) >= {"levenshtein", "jaro", "jaro-winkler"}


def test_md2txt(capsys, tmp_path):
    path = tmp_path / "doc.md"
    path.write_text("# Hi\n\nSome *text*.\n")
    code, out, _ = run(capsys, "md2txt", str(path))
    assert out == "Hi\n==\n\nSome text.\n"


def test_sniff_json(capsys, tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("name;age\nAda;36\n")
    code, out, _ = run(capsys, "sniff", "--json", str(path))
    assert json.loads(out) == {
        "format": "ssv", "delimiter": ";", "quotechar": '"', "has_header": True,
    }


def test_sniff_text(capsys, tmp_path):
    path = tmp_path / "data.tsv"
    path.write_text("a\tb\n1\t2\n")
    code, out, _ = run(capsys, "sniff", str(path))
    assert "delimiter: '\\t'" in out
    assert "has_header: True" in out


def test_missing_file(capsys):
    code, out, err = run(capsys, "md2txt", "/nonexistent/file.md")
    assert code == 1
    assert "textkit md2txt:" in err
