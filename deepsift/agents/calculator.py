"""The ReAct agent's calculator: arithmetic, percentages, a few functions, date differences and
unit conversions, evaluated by walking an allow-list of syntax nodes (never `eval`).

Whatever goes wrong becomes the answer, as a line saying what was wrong and how to write it: the
model reads it as the observation of its action and tries again.
"""

import ast
import datetime
import math
import operator
import re
import threading
from functools import cache
from typing import Any

MAX_CHARS = 300  # a longer expression is not arithmetic a question needs
MAX_DIGITS = 400  # refuse numbers (and powers) beyond this many digits: 9**9**9 would take hours
MAX_ARGS = 20
HOW = (
    "write one expression with numbers, + - * / // % ** ( ), e.g. (1200 - 950) / 950 * 100, "
    "15% of 80, sqrt(2), days between 2001-03-04 and 2010-05-06, or 5 miles to km"
)

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_FUNCTIONS = {
    "sqrt": math.sqrt,
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
    "log": math.log,
    "log10": math.log10,
    "exp": math.exp,
    "date": datetime.date,
}
_CONSTANTS = {"pi": math.pi, "e": math.e}

_ISO_DATE = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_BETWEEN = re.compile(
    r"^(?:the\s+)?(?P<unit>days|weeks|months|years)\s+(?:between|from)\s+(?P<a>.+?)\s+"
    r"(?:and|to|until)\s+(?P<b>.+)$",
    re.IGNORECASE,
)
_CONVERSION = re.compile(
    r"^(?:convert\s+)?(?P<amount>.*?[\d)])\s*(?P<unit>[^\d\s()+\-*/%][^()]*?)\s+"
    r"(?:to|in|into|as)\s+(?P<target>[^()]+)$",
    re.IGNORECASE,
)
_UNIT_TEXT = re.compile(r"^[A-Za-z_°µ][A-Za-z_°µ0-9 /*^.]{0,40}$")
# "15% of 80" and "80 * 12%": a percent sign not followed by a number is a percentage (with
# a number after it, as in "10 % 3", it is the remainder).
_PERCENT_OF = re.compile(r"(\d+(?:\.\d+)?)\s*(?:%|percent)\s*of\b", re.IGNORECASE)
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s*(?:%|percent\b)(?!\s*[\d(.])", re.IGNORECASE)
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


class CalculationError(ValueError):
    """What was wrong with an expression, in words for the model."""


def calculate(expression: str) -> str:
    """The value of `expression` as text, or a line starting "Error:" saying what was wrong."""
    text = _tidy(expression)
    try:
        if not text:
            raise CalculationError("the expression is empty")
        if len(text) > MAX_CHARS:
            raise CalculationError(f"the expression is longer than {MAX_CHARS} characters")
        between = _BETWEEN.match(text)
        if between:
            return _between(between["unit"].lower(), between["a"], between["b"])
        conversion = _CONVERSION.match(text)
        if conversion and not _is_arithmetic(text):
            return _convert(conversion["amount"], conversion["unit"], conversion["target"])
        return _show(evaluate(text))
    except CalculationError as e:
        return f"Error: {e}; {HOW}."


def evaluate(text: str) -> Any:
    """The value of an arithmetic expression (numbers, dates, allowed functions)."""
    text = _PERCENT_OF.sub(r"(\1/100)*", text)
    text = _PERCENT.sub(r"(\1/100)", text)
    text = _ISO_DATE.sub(lambda m: f"date({int(m[1])},{int(m[2])},{int(m[3])})", text)
    if not re.search(r"[A-Za-z_]\s*\(", text):  # 1,200,000, unless commas separate arguments
        text = _THOUSANDS.sub("", text)
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        raise CalculationError(f"{text!r} is not an arithmetic expression") from e
    return _value(tree.body)


def _tidy(expression: str) -> str:
    text = " ".join(str(expression).split()).strip("` ")
    if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"":  # the whole of it quoted
        text = text[1:-1].strip()
    text = re.sub(r"^(?:what\s+is|calculate|compute)\s+", "", text, flags=re.IGNORECASE)
    text = text.rstrip("?=. ").strip()
    return text.translate(str.maketrans({"×": "*", "÷": "/", "−": "-", "^": "**"}))


def _is_arithmetic(text: str) -> bool:
    """True when the words in `text` are only function names or constants (`min(3, 4)`)."""
    words = re.findall(r"[A-Za-z_]+", text)
    return all(word in _FUNCTIONS or word in _CONSTANTS for word in words)


def _value(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise CalculationError(f"{node.value!r} is not a number")
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _value(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _binary(node.op, _value(node.left), _value(node.right))
    if isinstance(node, ast.Name):
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        raise CalculationError(f"names are not allowed ({node.id!r}); use numbers")
    if isinstance(node, ast.Call):
        return _call(node)
    if isinstance(node, ast.Attribute):
        raise CalculationError("attribute access (a.b) is not allowed")
    kind = type(node).__name__
    raise CalculationError(f"{kind} is not allowed in a calculation")


def _binary(op: ast.operator, left: Any, right: Any) -> Any:
    if isinstance(op, ast.Pow):
        _check_power(left, right)
    try:
        result = _BINARY[type(op)](left, right)
    except ZeroDivisionError as e:
        raise CalculationError("division by zero") from e
    except OverflowError as e:
        raise CalculationError("the result is too large") from e
    except TypeError as e:
        raise CalculationError(f"cannot combine these values ({e})") from e
    if isinstance(result, datetime.timedelta):
        return result
    return _checked(result)


def _check_power(base: Any, exponent: Any) -> None:
    if not isinstance(base, int | float) or not isinstance(exponent, int | float):
        raise CalculationError("powers take numbers")
    if abs(base) in (0, 1) or exponent <= 0:
        return
    if exponent * math.log10(abs(base)) > MAX_DIGITS:
        raise CalculationError(f"the power is too large (over {MAX_DIGITS} digits)")


def _checked(value: Any) -> Any:
    if isinstance(value, complex):
        raise CalculationError("the result is not a real number")
    if isinstance(value, int) and value.bit_length() > MAX_DIGITS * 3.33:
        raise CalculationError(f"the result is too large (over {MAX_DIGITS} digits)")
    if isinstance(value, float) and not math.isfinite(value):
        raise CalculationError("the result is not a finite number")
    return value


def _call(node: ast.Call) -> Any:
    if isinstance(node.func, ast.Attribute):
        raise CalculationError("attribute access (a.b) is not allowed")
    name = node.func.id if isinstance(node.func, ast.Name) else None
    if name not in _FUNCTIONS:
        shown = name or type(node.func).__name__
        allowed = ", ".join(_FUNCTIONS)
        raise CalculationError(f"{shown!r} is not an allowed function (allowed: {allowed})")
    if node.keywords or len(node.args) > MAX_ARGS:
        raise CalculationError(f"{name}() takes up to {MAX_ARGS} plain arguments")
    args = [_value(arg) for arg in node.args]
    if name == "round" and len(args) == 2 and not (isinstance(args[1], int) and abs(args[1]) < 16):
        raise CalculationError("round(x, n) takes a whole number n between -15 and 15")
    try:
        return _checked(_FUNCTIONS[name](*args))
    except (TypeError, ValueError, OverflowError) as e:
        raise CalculationError(f"{name}() cannot take these arguments ({e})") from e


def _date(text: str) -> datetime.date:
    """An ISO date (2010-05-06), or a year alone (1879, read as 1 January)."""
    text = text.strip().rstrip(".")
    if re.fullmatch(r"\d{3,4}", text):
        return datetime.date(int(text), 1, 1)
    found = _ISO_DATE.fullmatch(text)
    if not found:
        raise CalculationError(f"{text!r} is not a date; write dates as YYYY-MM-DD or a year")
    try:
        return datetime.date(int(found[1]), int(found[2]), int(found[3]))
    except ValueError as e:
        raise CalculationError(f"{text!r} is not a valid date ({e})") from e


def _between(unit: str, first: str, second: str) -> str:
    start, end = _date(first), _date(second)
    days = (end - start).days
    if unit == "days":
        return f"{days} days"
    if unit == "weeks":
        return f"{_number(days / 7)} weeks"
    whole = _whole_years(start, end)
    if unit == "years":
        return f"{whole} years ({_number(days / 365.2425)} years exactly)"
    months = 12 * (end.year - start.year) + end.month - start.month
    months -= 1 if months > 0 and end.day < start.day else 0
    return f"{months} months"


def _whole_years(start: datetime.date, end: datetime.date) -> int:
    """Full years from `start` to `end`, as an age is counted."""
    sign = 1 if end >= start else -1
    early, late = sorted((start, end))
    years = late.year - early.year - ((late.month, late.day) < (early.month, early.day))
    return sign * years


@cache
def _units() -> Any:
    import pint  # on first conversion: building its registry takes a third of a second

    return pint.UnitRegistry()


_units_lock = threading.Lock()


def _convert(amount: str, unit: str, target: str) -> str:
    value = evaluate(amount)
    if not isinstance(value, int | float):
        raise CalculationError(f"{amount!r} is not an amount")
    for text in (unit, target):
        if not _UNIT_TEXT.match(text.strip()):
            raise CalculationError(f"{text!r} is not a unit")
    import pint

    registry = _units()
    try:
        with _units_lock:
            converted = registry.Quantity(value, registry.parse_units(unit.strip())).to(
                registry.parse_units(target.strip())
            )
    except pint.DimensionalityError as e:
        raise CalculationError(f"cannot convert {unit} to {target}: {e}") from e
    except (pint.UndefinedUnitError, pint.errors.DefinitionSyntaxError) as e:
        raise CalculationError(f"unknown unit in {unit!r} or {target!r} ({e})") from e
    except Exception as e:  # pint's parser raises a variety of errors on odd unit text
        raise CalculationError(f"cannot read the units {unit!r} and {target!r}") from e
    return f"{_number(converted.magnitude)} {converted.units}"


def _show(value: Any) -> str:
    if isinstance(value, datetime.timedelta):
        return f"{value.days} days ({_number(value.days / 365.2425)} years)"
    if isinstance(value, datetime.date):
        return value.isoformat()
    return _number(value)


def _number(value: float | int) -> str:
    """Ten significant digits at most; a whole float without its `.0`."""
    if isinstance(value, int):
        return str(value)
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.10g}"
