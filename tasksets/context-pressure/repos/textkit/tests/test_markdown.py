"""Tests for textkit.markdown."""

import pytest

from textkit.markdown import Block, parse_blocks, render, render_inline


@pytest.mark.parametrize(
    "source,expected",
    [
        ("**bold** and __strong__", "bold and strong"),
        ("*em* and _em_", "em and em"),
        ("snake_case_name stays", "snake_case_name stays"),
        ("2 * 3 * 4", "2 * 3 * 4"),
        ("`a *literal*` span", "a *literal* span"),
        ("``code with ` tick``", "code with ` tick"),
        ("[docs](https://example.com)", "docs (https://example.com)"),
        ("[https://x.io](https://x.io)", "https://x.io"),
        ('[t](https://x.io "Title")', "t (https://x.io)"),
        ("![a cat](cat.png)", "a cat"),
        ("<https://example.com>", "https://example.com"),
        ("a <em>b</em> c", "a b c"),
        ("~~gone~~", "gone"),
        (r"\*not\* emphasis", "*not* emphasis"),
    ],
    ids=["strong", "emphasis", "intraword_underscore", "lone_asterisks", "code_span",
         "double_backticks", "link", "bare_link", "link_title", "image", "autolink",
         "html", "strike", "escapes"],
)
def test_render_inline(source, expected):
    assert render_inline(source) == expected


def test_parse_blocks_kinds():
    source = "# T\n\npara\nmore\n\n- a\n- b\n\n> q\n\n```\nx\n```\n\n***\n"
    assert [b.kind for b in parse_blocks(source)] == [
        "heading", "paragraph", "item", "item", "quote", "code", "rule",
    ]


def test_parse_blocks_item_levels_and_markers():
    blocks = parse_blocks("- a\n  - b\n    - c\n3) d\n")
    assert [(b.level, b.marker) for b in blocks] == [(0, "-"), (1, "-"), (2, "-"), (0, "3.")]


def test_parse_item_lazy_continuation():
    (item,) = parse_blocks("- first line\ncontinues here\n")
    assert item == Block("item", "first line continues here", level=0, marker="-")


def test_headings():
    assert render("# Title") == "Title\n====="
    assert render("## Sub ##") == "Sub\n---"
    assert render("### Third") == "Third"


def test_hash_without_space_is_text():
    assert render("#hashtag") == "#hashtag"


def test_paragraph_lines_are_joined():
    assert render("one\ntwo\n\nthree") == "one two\n\nthree"


def test_list_without_width():
    assert render("- a\n- b\n  - c\n1. d") == "* a\n* b\n  * c\n1. d"


def test_code_block_kept_verbatim():
    source = "```python\nif x:\n    y  =  1\n```"
    assert render(source) == "    if x:\n        y  =  1"


def test_indented_code_block():
    assert render("text\n\n    code  here\n    more\n\nafter") == (
        "text\n\n    code  here\n    more\n\nafter"
    )


def test_unclosed_fence_runs_to_end():
    assert render("```\nx\ny") == "    x\n    y"


def test_rule_width():
    assert render("---") == "-" * 40
    assert render("a\n\n---", width=20) == "a\n\n" + "-" * 20


def test_quote_without_width():
    assert render("> one\n> two") == "> one two"


def test_paragraph_wrapped():
    text = "The quick brown fox jumps over the lazy dog and keeps running."
    assert render(text, width=20) == (
        "The quick brown fox\njumps over the lazy\ndog and keeps\nrunning."
    )


def test_short_item_with_width():
    assert render("- short item\n- another", width=30) == "* short item\n* another"


def test_bullet_item_continuation_lines_are_indented():
    source = "- Milk, two litres of the organic kind from the farm shop\n- Bread"
    assert render(source, width=30) == (
        "* Milk, two litres of the\n"
        "  organic kind from the farm\n"
        "  shop\n"
        "* Bread"
    )


def test_nested_item_continuation_lines_are_indented():
    source = "- Bread\n  - Sourdough if they have any left, otherwise plain white"
    assert render(source, width=30) == (
        "* Bread\n"
        "  * Sourdough if they have any\n"
        "    left, otherwise plain\n"
        "    white"
    )


def test_ordered_item_continuation_lines_are_indented():
    source = "9. Ninth item text that wraps\n10. Tenth item with a long enough text to wrap"
    assert render(source, width=24) == (
        "9. Ninth item text that\n"
        "   wraps\n"
        "10. Tenth item with a\n"
        "    long enough text to\n"
        "    wrap"
    )


def test_quote_wrapped_keeps_marker_on_every_line():
    source = "> Quote that is long enough to be wrapped over several lines."
    assert render(source, width=24) == (
        "> Quote that is long\n"
        "> enough to be wrapped\n"
        "> over several lines."
    )


def test_render_rejects_tiny_width():
    with pytest.raises(ValueError):
        render("x", width=5)


def test_full_document():
    source = (
        "# Notes\n\nSee **this** [page](https://x.io).\n\n- one\n- two\n\n"
        "> quoted\n\n```\ncode\n```\n"
    )
    assert render(source) == (
        "Notes\n=====\n\nSee this page (https://x.io).\n\n* one\n* two\n\n"
        "> quoted\n\n    code"
    )
