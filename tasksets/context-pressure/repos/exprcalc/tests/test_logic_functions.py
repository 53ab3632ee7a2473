import pytest

from exprcalc.errors import ArgumentError, NotAvailable


def test_if_branches(ev):
    assert ev('IF(2 > 1, "yes", "no")') == "yes"
    assert ev("IF(FALSE, 1)") is False


def test_if_rejects_text_condition(ev):
    with pytest.raises(ArgumentError):
        ev('IF("maybe", 1, 2)')


def test_ifs_and_switch(ev):
    assert ev('IFS(5 > 10, "a", 5 > 3, "b")') == "b"
    with pytest.raises(NotAvailable):
        ev("IFS(FALSE, 1)")
    assert ev('SWITCH(2, 1, "one", 2, "two", "many")') == "two"
    assert ev('SWITCH(9, 1, "one", "many")') == "many"


def test_and_or_short_circuit(ev):
    assert ev("AND(FALSE, 1/0)") is False
    assert ev("OR(TRUE, 1/0)") is True
    assert ev("AND({TRUE, TRUE}, 1 < 2)") is True


def test_xor_not(ev):
    assert ev("XOR(TRUE, TRUE, TRUE)") is True
    assert ev("NOT(0)") is True


def test_iferror_and_ifna(ev):
    assert ev('IFERROR(1/0, "oops")') == "oops"
    assert ev('IFNA(MATCH(9, {1, 2}, 0), "missing")') == "missing"
    with pytest.raises(Exception):
        ev('IFNA(1/0, "missing")')


def test_choose_is_lazy(ev):
    assert ev("CHOOSE(2, 1/0, 20, 1/0)") == 20


def test_information_functions(ev):
    assert ev('ISNUMBER("1")') is False
    assert ev("ISTEXT(\"1\")") is True
    assert ev("ISERROR(1/0)") is True
    assert ev("ERROR.TYPE(1/0)") == 2
    assert ev("ERROR.TYPE(NA())") == 7
    assert ev("TYPE({1})") == 64
    assert ev('N("x")') == 0
    assert ev("ISEVEN(4.7)") is True
