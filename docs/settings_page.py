"""Writes docs/configuration.md from the settings class, so the page lists every setting with
its variable, default, range and description as the code has them. `make docs` runs it;
tests/test_docs.py fails when the committed page differs from what it writes.

    python docs/settings_page.py
"""

import typing
from pathlib import Path

from annotated_types import Ge, Gt, Le
from pydantic.fields import FieldInfo

from deepsift.config import Settings

PAGE = Path(__file__).parent / "configuration.md"

HEAD = """\
# Configuration

Settings come from environment variables `DEEPSIFT_*`, then from an optional `deepsift.toml` in
the working directory (the same names in lower case, without the prefix), then the defaults
below. A malformed value is one line naming the setting and what it accepts, exit 2, before
anything starts; a variable or a `deepsift.toml` key that names no setting is a warning naming
the closest one.

```toml
# deepsift.toml
llm_base_url = "http://localhost:11434/v1"
llm_model = "qwen2.5:7b"
max_iterations = 2
```

Which model and store to use, with examples: [Models and endpoints](models.md) and
[Scaling out](scaling.md). This page is written from the settings class
(`deepsift/config/settings.py`) by `python docs/settings_page.py`; do not edit it by hand.

| setting | variable | default | range | meaning |
|---|---|---|---|---|
"""


def variables(name: str, field: FieldInfo) -> list[str]:
    alias = field.validation_alias
    return list(alias.choices) if alias else [f"DEEPSIFT_{name.upper()}"]


def default(field: FieldInfo) -> str:
    value = field.default
    if value in (None, "", []):
        return "(none)"
    if isinstance(value, bool):
        return str(value).lower()
    return f"`{value}`"


def accepted(field: FieldInfo) -> str:
    """The bounds of a number, the choices of a word, a list's separator."""
    kind = field.annotation
    if typing.get_origin(kind) is typing.Literal:
        return ", ".join(f"`{choice}`" for choice in typing.get_args(kind))
    if kind is bool:
        return "true, false"
    if typing.get_origin(kind) is list:
        return "a list"
    low = next((f"≥ {m.ge:,}" for m in field.metadata if isinstance(m, Ge)), "")
    low = low or next((f"> {m.gt:,}" for m in field.metadata if isinstance(m, Gt)), "")
    high = next((f"≤ {m.le:,}" for m in field.metadata if isinstance(m, Le)), "")
    return ", ".join(filter(None, [low, high]))


def meaning(name: str, field: FieldInfo) -> str:
    return field.description.replace("|", "\\|").replace("\n", " ")


def render() -> str:
    rows = [
        f"| `{name}` | {' or '.join(f'`{v}`' for v in variables(name, field))} | "
        f"{default(field)} | {accepted(field)} | {meaning(name, field)} |"
        for name, field in Settings.model_fields.items()
    ]
    return HEAD + "\n".join(rows) + "\n"


if __name__ == "__main__":
    PAGE.write_text(render())
