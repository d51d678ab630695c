"""The ``calculate`` tool's evaluator: arithmetic on numbers, read with :mod:`ast`, never ``eval``.

The expression comes from a model and may be hostile. It is parsed (``mode="eval"``, so no
statements), every node is checked against a short list before anything is computed (numbers,
``+ - * / // % **``, unary ``-``/``+``, parentheses, the functions and constants below: no other
name, no attribute, no indexing, no call of anything else), and the work is bounded: the text is
at most :data:`MAX_LENGTH` characters, a power is refused before it is computed when its result
would pass 10^:data:`MAX_DIGITS` or its exponent :data:`MAX_EXPONENT`, and every integer result is
checked against the same size, so no chain of products can grow a number without bound.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from typing import Any

from app.i18n import TextError, english

MAX_LENGTH = 500  # characters of an expression
MAX_EXPONENT = 10_000  # the largest exponent of an integer power
MAX_DIGITS = 1_000  # an integer result has at most this many digits (about 10^1000)
_LIMIT = 10 ** MAX_DIGITS
MAX_ROUND_DIGITS = 1_000  # round(x, n): |n| at most this (10**n is computed for integers)

Number = int | float

# name: (function, fewest arguments, most arguments)
FUNCTIONS: dict[str, tuple[Callable[..., Any], int, int]] = {
    "sqrt": (math.sqrt, 1, 1), "sin": (math.sin, 1, 1), "cos": (math.cos, 1, 1),
    "tan": (math.tan, 1, 1), "log": (math.log, 1, 2), "log10": (math.log10, 1, 1),
    "exp": (math.exp, 1, 1), "abs": (abs, 1, 1), "round": (round, 1, 2),
    "floor": (math.floor, 1, 1), "ceil": (math.ceil, 1, 1),
}
CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e}

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b, ast.Pow: lambda a, b: a ** b,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: lambda a: -a, ast.UAdd: lambda a: +a,
}
_ALLOWED = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name, ast.Call, ast.Load,
            *_BINARY, *_UNARY)


# Operators a model may try that are not arithmetic here, by what it wrote.
_SYMBOLS: dict[type[ast.AST], str] = {
    ast.BitAnd: "&", ast.BitOr: "|", ast.LShift: "<<", ast.RShift: ">>", ast.MatMult: "@",
    ast.Invert: "~", ast.Not: "not", ast.And: "and", ast.Or: "or",
}


class CalcError(TextError, ValueError):
    """An expression Hearth will not or cannot compute; the message tells the model why."""


def _allowed() -> str:
    return ", ".join([*FUNCTIONS, *CONSTANTS])


def _refuse_node(expression: str, node: ast.AST) -> CalcError:
    if isinstance(node, ast.BitXor):
        return CalcError(english("“^” is not a power here: write powers with “**”, such as 2 ** 10."))
    what = _SYMBOLS.get(type(node), type(node).__name__)
    if isinstance(node, ast.expr):
        what = ast.get_source_segment(expression, node) or what
    return CalcError(english("“{what}” is not allowed in a calculation: only numbers, + - * / // % **, "
                        "parentheses and {allowed} are.", what=what[:80], allowed=_allowed()))


def _check(expression: str, tree: ast.Expression) -> None:
    """Refuse any node outside the short list, before anything is computed."""
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise _refuse_node(expression, node)
        if isinstance(node, ast.Constant) and (
                isinstance(node.value, bool) or not isinstance(node.value, int | float)):
            raise _refuse_node(expression, node)
        if isinstance(node, ast.Name) and node.id not in CONSTANTS and node.id not in FUNCTIONS:
            raise CalcError(english("“{name}” is not a number, constant or function Hearth knows; "
                               "it knows {allowed}.", name=node.id[:80], allowed=_allowed()))
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
                raise _refuse_node(expression, node.func)
            if node.keywords:
                raise _refuse_node(expression, node)


def _sized(value: Any) -> Number:
    """``value`` if it is a number of bounded size; a sentence otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CalcError(english("The calculation gave something other than a number."))
    if isinstance(value, int) and abs(value) >= _LIMIT:
        raise CalcError(english("The result has more than {digits} digits; Hearth does not compute "
                           "numbers that large.", digits=MAX_DIGITS))
    if isinstance(value, float) and not math.isfinite(value):
        raise CalcError(english("The result is too large (or not a number) to compute."))
    return value


def _power(base: Number, exponent: Number) -> Number:
    """``base ** exponent``, refused before it is computed when it would be too large."""
    if isinstance(base, int) and isinstance(exponent, int) and abs(base) > 1:
        if abs(exponent) > MAX_EXPONENT:
            raise CalcError(english("The exponent {exponent} is too large: Hearth computes powers up "
                               "to an exponent of {limit}.", exponent=_short(exponent),
                               limit=MAX_EXPONENT))
        if exponent > 0 and exponent * math.log10(abs(base)) >= MAX_DIGITS:
            raise CalcError(english("The result has more than {digits} digits; Hearth does not compute "
                               "numbers that large.", digits=MAX_DIGITS))
    result = base ** exponent
    if isinstance(result, complex):
        raise CalcError(english("A negative number to a fractional power is not a real number."))
    return result


def _short(value: Number) -> str:
    text = str(value)
    return text if len(text) <= 40 else f"{text[:20]}…({len(text)} digits)"


def _call(name: str, args: list[Number]) -> Number:
    function, fewest, most = FUNCTIONS[name]
    if not fewest <= len(args) <= most:
        raise CalcError(english("{name}() takes {fewest} to {most} numbers, not {count}.",
                           name=name, fewest=fewest, most=most, count=len(args)))
    if name == "round" and len(args) == 2:
        digits = args[1]
        if not isinstance(digits, int) or abs(digits) > MAX_ROUND_DIGITS:
            raise CalcError(english("round()'s second number must be a whole number from -{limit} to "
                               "{limit}.", limit=MAX_ROUND_DIGITS))
    try:
        value: Number = function(*args)
    except ValueError as exc:  # sqrt(-1), log(0), floor(nan)
        raise CalcError(english("{name}() is not defined for {args} ({error}).", name=name,
                           args=", ".join(_short(a) for a in args), error=str(exc))) from exc
    return value


def _eval(node: ast.AST) -> Number:
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant):
        return _sized(node.value)
    if isinstance(node, ast.Name):
        return CONSTANTS[node.id] if node.id in CONSTANTS else _not_called(node.id)
    if isinstance(node, ast.UnaryOp):
        return _sized(_UNARY[type(node.op)](_eval(node.operand)))
    if isinstance(node, ast.BinOp):
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow):
            return _sized(_power(left, right))
        return _sized(_BINARY[type(node.op)](left, right))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return _sized(_call(node.func.id, [_eval(arg) for arg in node.args]))
    raise CalcError(english("That is not something Hearth can calculate."))  # _check let it through


def _not_called(name: str) -> Number:
    raise CalcError(english("{name} is a function: call it with a number, such as {name}(2).", name=name))


def evaluate(expression: str) -> Number:
    """The value of ``expression``; :class:`CalcError` with a sentence when it is refused."""
    text = expression.strip()
    if not text:
        raise CalcError(english("The expression is empty: give one such as “2 * (3 + 4)”."))
    if len(text) > MAX_LENGTH:
        raise CalcError(english("The expression is {length} characters long; Hearth calculates "
                           "expressions of at most {limit}.", length=len(text), limit=MAX_LENGTH))
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        detail = exc.msg if isinstance(exc, SyntaxError) else type(exc).__name__
        raise CalcError(english("“{expression}” is not an arithmetic expression ({error}).",
                           expression=text, error=detail)) from exc
    _check(text, tree)
    try:
        return _eval(tree)
    except ZeroDivisionError as exc:
        raise CalcError(english("Division by zero: “{expression}” has no value.",
                           expression=text)) from exc
    except OverflowError as exc:
        raise CalcError(english("The result is too large to compute ({error}).", error=str(exc))) from exc
    except RecursionError as exc:
        raise CalcError(english("The expression is nested too deeply.")) from exc


def format_number(value: Number) -> str:
    """An integer as all its digits; a float with 15 significant digits (0.1 + 0.2 shows 0.3)."""
    if isinstance(value, int):
        return str(value)
    return format(value, ".15g")


def calculate(expression: str) -> str:
    """The result of ``expression`` as text; :class:`CalcError` when it is refused."""
    return format_number(evaluate(expression))
