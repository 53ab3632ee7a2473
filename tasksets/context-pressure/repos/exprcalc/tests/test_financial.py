import pytest

from exprcalc.errors import NumError


def test_pmt(ev):
    assert ev("PMT(5%/12, 360, 200000)") == pytest.approx(-1073.64, abs=0.01)
    assert ev("PMT(0, 10, 1000)") == -100


def test_fv_pv(ev):
    assert ev("FV(6%/12, 10, -200, -500, 1)") == pytest.approx(2581.40, abs=0.01)
    assert ev("PV(8%/12, 240, 500)") == pytest.approx(-59777.15, abs=0.01)


def test_nper_rate(ev):
    assert ev("NPER(1%, -100, 1000)") == pytest.approx(10.5886, abs=1e-4)
    assert ev("RATE(48, -200, 8000)") == pytest.approx(0.007701, abs=1e-6)


def test_npv_irr(ev):
    assert ev("NPV(10%, -10000, 3000, 4200, 6800)") == pytest.approx(1188.44, abs=0.01)
    assert ev("IRR({-70000, 12000, 15000, 18000, 21000, 26000})") == pytest.approx(0.0866, abs=1e-4)
    with pytest.raises(NumError):
        ev("IRR({100, 200})")


def test_effect_nominal(ev):
    assert ev("EFFECT(5.25%, 4)") == pytest.approx(0.053543, abs=1e-6)
    assert ev("NOMINAL(5.3543%, 4)") == pytest.approx(0.0525, abs=1e-5)


def test_depreciation(ev):
    assert ev("SLN(30000, 7500, 10)") == 2250
    assert ev("DDB(2400, 300, 10, 1)") == pytest.approx(480)


def test_engineering(ev):
    assert ev("DEC2BIN(9, 8)") == "00001001"
    assert ev("DEC2BIN(-1)") == "1111111111"
    assert ev('BIN2DEC("1111111111")') == -1
    assert ev("DEC2HEX(255)") == "FF"
    assert ev('HEX2DEC("ff")') == 255
    assert ev("BITAND(12, 10)") == 8
    assert ev("BITLSHIFT(1, 4)") == 16
