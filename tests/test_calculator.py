import time

import pytest

from deepsift.agents.calculator import calculate


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("(1200 - 950) / 950 * 100", "26.31578947"),
        ("2 ** 10", "1024"),
        ("2^10", "1024"),
        ("-3 + 4 * (2 - 5)", "-15"),
        ("17 // 5 + 17 % 5", "5"),
        ("round(3.14159, 2)", "3.14"),
        ("max(3, 8, 5) - min(4, 2)", "6"),
        ("sqrt(144) + abs(-2.5)", "14.5"),
        ("log(1000, 10)", "3"),
        ("1,200,000 / 3", "400000"),
        ("What is 3 + 4?", "7"),
    ],
)
def test_arithmetic_is_evaluated(expression, value):
    assert calculate(expression) == value


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("15% of 80", "12"),
        ("80 * 12%", "9.6"),
        ("200 + 10 percent of 200", "220"),
        ("10 % 3", "1"),  # a number after the sign: the remainder
    ],
)
def test_percentages_are_read_as_shares_and_a_remainder_stays_a_remainder(expression, value):
    assert calculate(expression) == value


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("days between 2001-03-04 and 2010-05-06", "3350 days"),
        ("date(2010, 5, 6) - date(2001, 3, 4)", "3350 days (9.171988473 years)"),
        ("2010-05-06 - 2001-03-04", "3350 days (9.171988473 years)"),
        ("years between 1879 and 1955", "76 years (75.9988227 years exactly)"),
        ("years between 1990-06-15 and 2020-06-14", "29 years (29.99924708 years exactly)"),
        ("months between 2001-03-04 and 2002-05-01", "13 months"),
    ],
)
def test_date_differences_count_days_months_and_whole_years(expression, value):
    assert calculate(expression) == value


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("5 miles to km", "8.04672 kilometer"),
        ("100 degF to degC", "37.77777778 degree_Celsius"),
        ("convert 60 mph to km/h", "96.56064 kilometer / hour"),
        ("(2 + 3) kg in pound", "11.02311311 pound"),
    ],
)
def test_units_are_converted(expression, value):
    assert calculate(expression) == value


@pytest.mark.parametrize(
    ("expression", "says"),
    [
        ("__import__('os')", "'__import__' is not an allowed function"),
        ("__import__('os').system('true')", "attribute access"),
        ("open('/etc/passwd')", "'open' is not an allowed function"),
        ("().__class__.__bases__", "attribute access"),
        ("x + 1", "names are not allowed ('x')"),
        ("os", "names are not allowed ('os')"),
        ("(lambda: 1)()", "is not an allowed function"),
        ("lambda: 1", "Lambda is not allowed"),
        ("[1, 2][0]", "Subscript is not allowed"),
        ("'a' * 3", "is not a number"),
        ("9**9**9", "the power is too large"),
        ("10**399 * 10**399", "the result is too large"),
        ("round(5, -10**9)", "round(x, n) takes a whole number n"),
        ("1/0", "division by zero"),
        ("(-8) ** 0.5", "not a real number"),
        ("5 kg to metre", "cannot convert kg to metre"),
        ("5 blorps to km", "unknown unit"),
        ("days between 2001-02-30 and 2002-01-01", "is not a valid date"),
        ("1 +", "is not an arithmetic expression"),
        ("", "the expression is empty"),
    ],
)
def test_anything_else_is_refused_with_what_was_wrong_and_how_to_write_it(expression, says):
    started = time.monotonic()

    result = calculate(expression)

    assert result.startswith("Error: ") and says in result, result
    assert "15% of 80" in result  # the format to use instead
    assert time.monotonic() - started < 1
