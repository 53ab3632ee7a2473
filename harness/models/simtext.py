"""How the simulator reads a task statement: the names and words worth a search, and their stems.

Each turn asks again for the same statement, so every reading is cached.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["identifiers", "keywords", "task_stems", "stem", "COMMON"]

_IDENT = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)(\()?")
_WORD = re.compile(r"(?<![\w.\"'])([A-Za-z][a-z]+|[A-Z]{3,})(?![\w(\"'])")
_BACKTICK = re.compile(r"`([^`\n]+)`")
COMMON = set("""print len str int float list dict set tuple bool None True False assert return import from
self def class with open range sorted type object raise except try else elif while for and not
this that when then with into have should would could expected actual error python pytest test tests
instead value values result returns called calling function method example reproduce output""".split())
_PLAIN = set("""about above after again against also always another any anything around because been before
being below between both but cannot case cases come comes does doing done down during each even every
fine first found from gets give gives given going good here however just keep keeps know last like
looks make makes many more most much must need needs never new next note now number numbers only other
others our out over same seems shown since some something still such sure take than their them there
these they thing things think those through too under until used uses using very want wants was way
were what where which while who whole why will without work works working wrong yet you your right
left back bug bugs broken issue happens happen behaviour behavior correct correctly currently already
line lines file files code data see says said show shows time times use user users set sets get
different difference answer answers compare compared against anyone anything everything nothing another
actually really simply simple clearly likely probably already instead should would could become became
before behind believe better between beyond change changed changes check checked checks either enough
entire except expect expects explain follow follows following happen happened happens having itself
little matter mean means measure middle minute mostly myself nearly number others output outputs perhaps
please pretty problem problems reason return returned reported second seems should simply someone
sometimes somewhere status still stopped support supposed though thought through together toward turned
unless unlike update updated usually version whatever whether within without wrong around always almost
across during documented documentation expected example examples correct correctly
currently properly people customer customers report reports looking look looks reproduce
traceback recent crash crashes crashed string strings""".split())


@lru_cache(maxsize=1024)
def identifiers(text: str, limit: int) -> tuple[tuple[str, bool], ...]:
    """Names worth searching for, in order of appearance: (name, looks like a call or class)."""
    seen: dict[str, bool] = {}
    spans = [m.group(1).strip() for m in _BACKTICK.finditer(text)]
    for chunk in spans + [text]:
        whole = chunk is not text and re.fullmatch(r"[A-Za-z_][\w.]*(\(\))?", chunk) is not None
        for m in _IDENT.finditer(chunk):
            name, call = m.group(1), bool(m.group(2))
            codeish = call or "_" in name or (name[0].isupper() and any(c.islower() for c in name[1:])
                                              and any(c.isupper() for c in name[1:]))
            if len(name) < 4 or name.lower() in COMMON or not (codeish or whole):
                continue
            if name not in seen:
                seen[name] = call or name[0].isupper()
    return tuple(seen.items())[:limit]


@lru_cache(maxsize=1024)
def keywords(text: str, limit: int) -> tuple[str, ...]:
    """Plain words of the task statement worth a search: upper-case names first, then long words."""
    codeish = {n for n, _ in identifiers(text, 100)}
    errors = " ".join(re.findall(r"\b\w+(?:Error|Exception): (.*)", text)).replace('"', " ")
    prose = re.sub(r"^ {4}.*$", "", text, flags=re.M)  # code samples are searched by name, not by word
    words = [m.group(1) for m in _WORD.finditer(errors)] + [m.group(1) for m in _WORD.finditer(prose)]
    upper = [w for w in words if w.isupper() and w.lower() not in _PLAIN]
    long = [w.lower() for w in words if not w.isupper() and len(w) >= 6 and w.lower() not in _PLAIN | COMMON]
    first = [w.lower() for w in _WORD.findall(errors) if len(w) >= 5 and w.lower() not in _PLAIN | COMMON]
    code = " ".join(_BACKTICK.findall(text) + re.findall(r"^ {4}.*$", text, flags=re.M))
    first += [w.lower() for w in re.findall(r"(?<![\w-])([A-Za-z]{3,}(?:-[A-Za-z]{3,})+)(?![\w-])", code)]
    first += re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]{2,})", code)
    first += [w for span in _BACKTICK.findall(text) for w in re.findall(r"(?<![\w.\\-])([a-z]{4,})(?![\w(.-])", span)
              if w not in _PLAIN | COMMON]
    programs = {w.lower() for w in re.findall(r"(?:\$ |\bfrom |\bimport |-m |^ {4,})(\w+)(?= )", text, flags=re.M)}
    out = [w for w in dict.fromkeys(first + upper + long) if w not in codeish and w.lower() not in programs]
    return tuple(out[:limit])


@lru_cache(maxsize=1024)
def task_stems(task: str, words: tuple[str, ...]) -> frozenset[str]:
    """Stems of the task's names (and of their snake_case parts) and of its plain words."""
    names = [n.lower() for n, _ in identifiers(task, 100)]
    return frozenset({stem(p) for n in names for p in [n, *n.split("_")] if len(p) >= 4} |
                     {stem(w) for w in [*words, *keywords(task, 100)]})


def stem(word: str) -> str:
    word = word.lower()
    for suffix in ("ations", "ation", "ings", "ing", "ies", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[:-len(suffix)]
    return word

