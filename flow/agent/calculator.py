"""Arithmetic for the agent's calculator tool, without eval: the expression is parsed with `ast` and only
numbers, + - * / // % ** and parentheses are evaluated. Names, calls, attributes and anything else are
refused, and results are kept small enough to print."""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable

from tracegraph.base.errors import TraceGraphError

MAX_LENGTH = 500
MAX_BITS = 10_000  # about 3,000 digits: Python refuses to print much larger integers anyway

_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[float], float]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_REFUSED = {ast.Name: "names", ast.Call: "function calls", ast.Attribute: "attributes",
            ast.Subscript: "subscripts", ast.Lambda: "lambdas", ast.Compare: "comparisons", ast.BoolOp: "and/or"}


class CalculatorError(TraceGraphError, ValueError):
    """An expression the calculator will not evaluate, or whose result is out of range."""


def calculate(expression: str) -> int | float:
    """The value of an arithmetic expression.

    >>> calculate("(2 + 3) * 4 ** 2 / 8")
    10.0
    >>> calculate("__import__('os')")
    Traceback (most recent call last):
    ...
    tracegraph.flow.agent.calculator.CalculatorError: function calls are not allowed: only numbers, + - * / // % ** and ( )
    """
    text = expression.strip().rstrip("=").strip()
    if not text:
        raise CalculatorError("empty expression")
    if len(text) > MAX_LENGTH:
        raise CalculatorError(f"expression longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise CalculatorError(f"not an arithmetic expression: {exc.msg}") from None
    return _evaluate(tree.body)


def show(value: int | float) -> str:
    """A result as people write it: `5` rather than `5.0`, no float noise in the last digits."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.15g}" if isinstance(value, float) else str(value)


def _evaluate(node: ast.AST) -> int | float:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return _checked(node.value)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _checked(_UNARY[type(node.op)](_evaluate(node.operand)))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow):
            _check_power(left, right)
        try:
            return _checked(_BINARY[type(node.op)](left, right))
        except ZeroDivisionError:
            raise CalculatorError("division by zero") from None
        except OverflowError:
            raise CalculatorError("result out of range") from None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitXor):
        raise CalculatorError("'^' is not a power here: write ** (e.g. 2 ** 10)")
    if isinstance(node, ast.Constant):
        raise CalculatorError(f"{node.value!r} is not a number: only numbers, + - * / // % ** and ( )")
    what = _REFUSED.get(type(node), f"{type(node).__name__} expressions")
    raise CalculatorError(f"{what} are not allowed: only numbers, + - * / // % ** and ( )")


def _check_power(base: int | float, exponent: int | float) -> None:
    """Refuse powers whose result would be huge before computing them (9 ** 9 ** 9 would hang)."""
    if base in (0, 1, -1) or exponent <= 0:
        return
    if exponent * max(1.0, math.log2(abs(base))) > MAX_BITS:
        raise CalculatorError("result out of range")


def _checked(value: int | float | complex) -> int | float:
    if isinstance(value, complex):  # (-8) ** 0.5
        raise CalculatorError("the result is not a real number")
    if isinstance(value, int) and value.bit_length() > MAX_BITS:
        raise CalculatorError("result out of range")
    if isinstance(value, float) and not math.isfinite(value):
        raise CalculatorError("result out of range")
    return value
