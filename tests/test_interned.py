"""The one hash-consing table: Terms (values) and Literals (conditions) share it."""
from warplint.analysis.interned import Interned
from warplint.analysis.lanes import Literals
from warplint.analysis.values import Terms


def test_terms_and_literals_are_one_interning_table():
    terms, lits = Terms(), Literals()
    assert isinstance(terms, Interned) and isinstance(lits, Interned)
    a = terms.get(("add", 1, 2), "x + y")
    assert a == 1 and terms.get(("add", 1, 2), "other") == a and terms.info[a] == "x + y"
    p = lits.get(("lt", a), "lane", "lane", "x < y")
    assert p == 1 and lits.get(("lt", a), "uniform", "block", "z") == p and lits[-p].text == "x < y"
