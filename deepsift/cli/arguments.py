"""Argument types the commands share: argparse calls them, and their errors name the flag."""

import argparse
import math


def positive(text: str) -> int:
    """A whole number ≥ 1 (argparse type: its error names the flag)."""
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number ≥ 1, got {text!r}")
    return int(text)


def seconds(text: str) -> float:
    """Seconds ≥ 0 (argparse type)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"expected seconds ≥ 0, got {text!r}")
    return value


def names(text: str) -> list[str] | None:
    """A comma-separated list of names; None (search the default sources) when it is empty."""
    return [n.strip() for n in text.split(",") if n.strip()] if text else None
