"""Settings: environment variables DEEPSIFT_*, then an optional ./deepsift.toml, then defaults.

settings.py holds the settings themselves, loading.py reads them and words what is wrong with them.

Imports only deepsift.errors and deepsift.text.
"""

from deepsift.config.loading import SettingsError, load_settings, make_folder, unknown_settings
from deepsift.config.settings import LENGTHS, TOML_FILE, Length, Settings

__all__ = [
    "LENGTHS",
    "TOML_FILE",
    "Length",
    "Settings",
    "SettingsError",
    "load_settings",
    "make_folder",
    "unknown_settings",
]
