from textutils import to_camel_case, to_kebab_case, to_pascal_case, to_snake_case, to_title_case
from textutils.case import split_identifier


def test_split_identifier():
    assert split_identifier("parseHTTPResponse") == ["parse", "http", "response"]
    assert split_identifier("already_snake-or-kebab") == ["already", "snake", "or", "kebab"]


def test_snake_and_kebab():
    assert to_snake_case("userID") == "user_id"
    assert to_kebab_case("XMLHttpRequest") == "xml-http-request"


def test_camel_and_pascal():
    assert to_camel_case("user_id") == "userId"
    assert to_pascal_case("user-id") == "UserId"
    assert to_camel_case("") == ""


def test_title_case_small_words():
    assert to_title_case("the lord of the rings") == "The Lord of the Rings"


def test_title_case_keeps_acronyms():
    assert to_title_case("how NASA built the rocket") == "How NASA Built the Rocket"


def test_title_case_last_word_capitalized():
    assert to_title_case("what it is for") == "What It Is For"


def test_title_case_contractions():
    assert to_title_case("don't stop me now") == "Don't Stop Me Now"
    assert to_title_case("the cat's pajamas") == "The Cat's Pajamas"
