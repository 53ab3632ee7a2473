"""Tests for the Porter stemmer."""

import pytest

from textkit.stem import PorterStemmer, measure, stem, stem_text, stem_words

# Examples given in Porter (1980), run through the whole algorithm.
PAPER_EXAMPLES = [
    ("caresses", "caress"),
    ("ponies", "poni"),
    ("ties", "ti"),
    ("caress", "caress"),
    ("cats", "cat"),
    ("feed", "feed"),
    ("agreed", "agre"),
    ("plastered", "plaster"),
    ("bled", "bled"),
    ("motoring", "motor"),
    ("sing", "sing"),
    ("conflated", "conflat"),
    ("troubled", "troubl"),
    ("sized", "size"),
    ("hopping", "hop"),
    ("tanned", "tan"),
    ("falling", "fall"),
    ("hissing", "hiss"),
    ("fizzed", "fizz"),
    ("failing", "fail"),
    ("filing", "file"),
    ("happy", "happi"),
    ("sky", "sky"),
    ("relational", "relat"),
    ("conditional", "condit"),
    ("rational", "ration"),
    ("valenci", "valenc"),
    ("hesitanci", "hesit"),
    ("digitizer", "digit"),
    ("conformabli", "conform"),
    ("radicalli", "radic"),
    ("differentli", "differ"),
    ("vileli", "vile"),
    ("analogousli", "analog"),
    ("vietnamization", "vietnam"),
    ("predication", "predic"),
    ("operator", "oper"),
    ("feudalism", "feudal"),
    ("decisiveness", "decis"),
    ("hopefulness", "hope"),
    ("callousness", "callous"),
    ("formaliti", "formal"),
    ("sensitiviti", "sensit"),
    ("sensibiliti", "sensibl"),
    ("triplicate", "triplic"),
    ("formative", "form"),
    ("formalize", "formal"),
    ("electriciti", "electr"),
    ("electrical", "electr"),
    ("hopeful", "hope"),
    ("goodness", "good"),
    ("revival", "reviv"),
    ("allowance", "allow"),
    ("inference", "infer"),
    ("airliner", "airlin"),
    ("gyroscopic", "gyroscop"),
    ("adjustable", "adjust"),
    ("defensible", "defens"),
    ("irritant", "irrit"),
    ("replacement", "replac"),
    ("adjustment", "adjust"),
    ("dependent", "depend"),
    ("adoption", "adopt"),
    ("homologou", "homolog"),
    ("communism", "commun"),
    ("activate", "activ"),
    ("angulariti", "angular"),
    ("homologous", "homolog"),
    ("effective", "effect"),
    ("bowdlerize", "bowdler"),
    ("probate", "probat"),
    ("rate", "rate"),
    ("cease", "ceas"),
    ("controll", "control"),
    ("roll", "roll"),
    ("generalizations", "gener"),
    ("oscillators", "oscil"),
]

# Everyday words, checked against Porter's reference implementation.
COMMON_WORDS = [
    ("running", "run"),
    ("easily", "easili"),
    ("national", "nation"),
    ("nationality", "nation"),
    ("organization", "organ"),
    ("organizing", "organ"),
    ("generously", "gener"),
    ("abilities", "abil"),
    ("happiness", "happi"),
    ("meetings", "meet"),
    ("hoping", "hope"),
    ("hopped", "hop"),
    ("dried", "dri"),
    ("cries", "cri"),
    ("skies", "ski"),
    ("flying", "fly"),
    ("studying", "studi"),
    ("agreement", "agreement"),
    ("argued", "argu"),
    ("university", "univers"),
    ("communication", "commun"),
    ("computational", "comput"),
    ("relativity", "rel"),
    ("beautifully", "beautifulli"),
    ("traditional", "tradit"),
    ("conditionally", "condition"),
    ("democratization", "democrat"),
    ("sensational", "sensat"),
    ("motivation", "motiv"),
    ("operational", "oper"),
    ("presumably", "presum"),
    ("informative", "inform"),
    ("probability", "probabl"),
    ("evaluation", "evalu"),
    ("quietly", "quietli"),
    ("helpfulness", "help"),
    ("carefully", "carefulli"),
    ("carelessness", "careless"),
    ("possession", "possess"),
    ("processing", "process"),
    ("connection", "connect"),
    ("connected", "connect"),
    ("connecting", "connect"),
    ("connections", "connect"),
    ("generous", "gener"),
]


@pytest.mark.parametrize("word,expected", PAPER_EXAMPLES, ids=[w for w, _ in PAPER_EXAMPLES])
def test_paper_examples(word, expected):
    assert stem(word) == expected


@pytest.mark.parametrize("word,expected", COMMON_WORDS, ids=[w for w, _ in COMMON_WORDS])
def test_common_words(word, expected):
    assert stem(word) == expected


@pytest.mark.parametrize(
    "word,m",
    [("tr", 0), ("ee", 0), ("tree", 0), ("y", 0), ("by", 0),
     ("trouble", 1), ("oats", 1), ("trees", 1), ("ivy", 1),
     ("troubles", 2), ("private", 2), ("oaten", 2), ("orrery", 2)],
)
def test_measure(word, m):
    assert measure(word) == m


def test_short_words_unchanged():
    assert [stem(w) for w in ("a", "is", "as", "at")] == ["a", "is", "as", "at"]


def test_stem_lowercases():
    assert stem("Running") == "run"
    assert stem("CONNECTIONS") == "connect"


def test_non_alphabetic_unchanged():
    assert stem("r2d2") == "r2d2"
    assert stem("x-ray") == "x-ray"


def test_exceptions_override_algorithm():
    stemmer = PorterStemmer(exceptions={"news": "news", "skies": "sky"})
    assert stemmer.stem("news") == "news"
    assert stemmer("skies") == "sky"
    assert stemmer("cats") == "cat"


def test_stem_words():
    assert stem_words(["cats", "running", "ponies"]) == ["cat", "run", "poni"]


def test_stem_text_keeps_punctuation():
    assert stem_text("Cats were running, happily!") == "cat were run, happili!"


def test_steps_individually():
    s = PorterStemmer
    assert s.step1a("caresses") == "caress"
    assert s.step1b("conflated") == "conflate"
    assert s.step1c("happy") == "happi"
    assert s.step2("relational") == "relate"
    assert s.step3("triplicate") == "triplic"
    assert s.step4("revival") == "reviv"
    assert s.step5a("probate") == "probat"
    assert s.step5b("controll") == "control"
