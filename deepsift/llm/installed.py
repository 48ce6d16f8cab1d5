"""Models that ship in PyPI packages: where an installed package lies, and the one-line error
when a model cannot be loaded or reached."""

import importlib.util
from pathlib import Path

from deepsift.errors import UserError


class ModelError(UserError):
    """A model cannot be loaded or reached; the message says what to do."""


def package_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(f"package {package!r} is not installed: pip install -e .")
    return Path(next(iter(spec.submodule_search_locations)))
