"""The docs site: every setting on the configuration page as the settings class has it, every
page in the navigation, every docs link of the README to a page that exists. (`make docs` builds
the site with --strict in CI: broken links and anchors inside it fail there.)"""

import importlib.util
import re

from deepsift.config import Settings

from conftest import ROOT

DOCS = ROOT / "docs"


def settings_page():
    spec = importlib.util.spec_from_file_location("settings_page", DOCS / "settings_page.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_setting_is_on_the_configuration_page_with_its_variable():
    page = (DOCS / "configuration.md").read_text()
    rows = {row.split("|")[1].strip(" `"): row for row in re.findall(r"^\| `.*$", page, re.M)}

    assert set(rows) == set(Settings.model_fields)
    for name in Settings.model_fields:
        assert f"`DEEPSIFT_{name.upper()}`" in rows[name], name


def test_the_configuration_page_is_the_one_the_settings_class_writes():
    page = settings_page()

    assert (DOCS / "configuration.md").read_text() == page.render(), (
        "docs/configuration.md is stale: run python docs/settings_page.py"
    )


def test_every_setting_says_what_it_means():
    assert [name for name, field in Settings.model_fields.items() if not field.description] == []


def test_every_docs_page_is_in_the_navigation():
    nav = set(re.findall(r":\s+(\S+\.md)$", (ROOT / "mkdocs.yml").read_text(), re.M))

    assert nav == {path.name for path in DOCS.glob("*.md")}


def test_the_readme_is_short_and_links_only_to_pages_that_exist():
    readme = (ROOT / "README.md").read_text()
    linked = re.findall(r"\]\((docs/[^)#]+)", readme)

    assert len(readme.splitlines()) <= 150
    assert linked and all((ROOT / path).is_file() for path in linked), linked
