"""Where a document lives: a web address, or a file path shown relative to the working
directory."""

from pathlib import Path


def is_url(location: str) -> bool:
    """An http(s) address, not a file path."""
    return location.startswith(("http://", "https://"))


def display_path(source: str) -> str:
    """A source as a person reads it: a URL as it is, a file path relative to the working
    directory when it lies under it."""
    if is_url(source):
        return source
    try:
        return str(Path(source).relative_to(Path.cwd()))
    except ValueError:
        return source
