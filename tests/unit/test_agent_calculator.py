"""The calculator tool evaluates arithmetic only: no names, calls or anything that could run code."""

import re

import pytest

from tracegraph.flow.agent.calculator import CalculatorError, calculate, show


@pytest.mark.parametrize("expression, expected", [
    ("1 + 2 * 3", "7"), ("(1200 - 300) * 0.15", "135"), ("7 // 2", "3"), ("-7 % 3", "2"), ("2 ** 10", "1024"),
    ("10 / 4", "2.5"), ("0.1 + 0.2", "0.3"), ("-(3 - 5)", "2"), ("2 ** -1", "0.5"), ("1e3 + 1", "1001"), ("6 * 7 =", "42"),
])
def test_arithmetic(expression, expected):
    assert show(calculate(expression)) == expected


@pytest.mark.parametrize("expression, message", [
    ("__import__('os').system('true')", "function calls are not allowed"),
    ("abs(-1)", "function calls are not allowed"),
    ("x + 1", "names are not allowed"),
    ("(1).__class__", "attributes are not allowed"),
    ("[1, 2][0]", "subscripts are not allowed"),
    ("lambda: 1", "lambdas are not allowed"),
    ("[x for x in (1, 2)]", "ListComp expressions are not allowed"),
    ("1 < 2", "comparisons are not allowed"),
    ("'a' * 3", "is not a number"),
    ("True + 1", "is not a number"),
    ("2 ^ 3", "write **"),
    ("1 / 0", "division by zero"),
    ("9 ** 9 ** 9", "out of range"),
    ("10.0 ** 400", "out of range"),
    ("(-8) ** 0.5", "not a real number"),
    ("1 +", "not an arithmetic expression"),
    ("", "empty expression"),
    ("1+" * 300 + "1", "longer than"),
])
def test_refusals_say_why(expression, message):
    with pytest.raises(CalculatorError, match=re.escape(message)):
        calculate(expression)


def test_doctests():
    import doctest

    import tracegraph.flow.agent.calculator as module
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
