"""Loading the settings, and the one line that says which setting is wrong, where it is set and
what it accepts."""

import difflib
import logging
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic import ValidationError

from deepsift.config.settings import TOML_FILE, Settings
from deepsift.errors import UserError

log = logging.getLogger(__name__)


class SettingsError(UserError):
    """A setting the user gave (environment or deepsift.toml) is malformed or out of range."""


def make_folder(path: Path, setting: str) -> Path:
    """`path` as a folder, made if new; a SettingsError naming `setting` when it is a file, lies
    under one, or cannot be made there."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SettingsError(
            f"{setting}: cannot use {path} as a folder ({e.strerror}); set it to a folder you "
            "can write"
        ) from None
    return path


def load_settings(**given: Any) -> Settings:
    """Settings from the environment and deepsift.toml, with `given` values (command-line flags)
    on top; SettingsError names the first bad setting, where it is set, and what it accepts."""
    try:
        settings = Settings(**given)
    except tomllib.TOMLDecodeError as e:
        raise SettingsError(f"{TOML_FILE} is not valid TOML: {e}; fix or remove it") from None
    except UnicodeDecodeError as e:
        raise SettingsError(
            f"{TOML_FILE} is not UTF-8 text (byte {e.object[e.start]:#04x} at offset {e.start}); "
            "save it as UTF-8"
        ) from None
    except ValidationError as e:
        raise SettingsError(_first_problem(e)) from None
    for line in unknown_settings(os.environ, Path(TOML_FILE)):
        log.warning(line)
    return settings


def unknown_settings(environment: Mapping[str, str], toml: Path) -> list[str]:
    """A line for each DEEPSIFT_* variable and each key of the TOML file that names no setting
    (ignored, so a typo would go unseen), with the closest setting's name."""
    names = list(Settings.model_fields)
    lines = []
    for key in sorted(environment):
        name = key.removeprefix("DEEPSIFT_").lower()
        if key.startswith("DEEPSIFT_") and name not in names:
            closest = _closest(name, names)
            lines.append(_ignored(key, closest and f"DEEPSIFT_{closest.upper()}"))
    try:
        keys = tomllib.loads(toml.read_text(encoding="utf-8")) if toml.is_file() else {}
    except (OSError, ValueError):  # unreadable: Settings said so already, or will
        keys = {}
    lines += [_ignored(f"{toml}: {key}", _closest(key, names)) for key in keys if key not in names]
    return lines


def _closest(name: str, names: list[str]) -> str | None:
    match = difflib.get_close_matches(name, names, n=1, cutoff=0.75)
    return match[0] if match else None


def _ignored(where: str, closest: str | None) -> str:
    return f"{where} is no setting and is ignored" + (
        f"; did you mean {closest}?" if closest else ""
    )


def _first_problem(e: ValidationError) -> str:
    problems = e.errors()
    first = problems[0]
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    if not first["loc"]:  # a rule across settings
        return f"invalid settings: {first['msg'].removeprefix('Value error, ')}{more}"
    name = str(first["loc"][0])
    where = f"environment DEEPSIFT_{name.upper()} or {name} in {TOML_FILE}"
    # A validator's own words say what the setting expects; else its type and range do.
    expected = (
        first["msg"].removeprefix("Value error, ")
        if first["type"] == "value_error"
        else f"expected {_allowed(name)}"
    )
    return f"invalid setting {name}={first['input']!r} ({where}): {expected}{more}"


def _allowed(name: str) -> str:
    """What a setting accepts, in words: its type and range (from its field's constraints)."""
    field = Settings.model_fields.get(name)
    if field is None:
        return "a valid value"
    if get_origin(field.annotation) is Literal:
        return "one of " + ", ".join(map(str, get_args(field.annotation)))
    words = {int: "a whole number", float: "a number", bool: "true or false", Path: "a path"}
    kinds = [t for t in get_args(field.annotation) if t is not type(None)] or [field.annotation]
    kind = words.get(kinds[0], "text")  # int | None: a whole number, or left empty
    bounds = [
        f"{sign} {_number(getattr(rule, attr))}"
        for rule in field.metadata
        for attr, sign in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<"))
        if hasattr(rule, attr)
    ]
    return " and ".join([f"{kind} {bounds[0]}", *bounds[1:]]) if bounds else kind


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
