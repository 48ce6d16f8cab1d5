"""SearXNG as the web backend, and the web filters (domains, recency) for every backend."""

import re
import socket
from datetime import UTC, date, datetime

import pytest

from deepsift.api import research
from deepsift.config import Settings, SettingsError, load_settings
from deepsift.deps import Deps
from deepsift.errors import UserError
from deepsift.llm.chat import chat_model
from deepsift.llm.embedders import get_embedder
from deepsift.web.filters import WebFilter, host_of, parse_date
from deepsift.web.results import SearchError
from deepsift.web.searxng import SearxngSearch

from fake_web import KEY, OTHER_PAGES, PAGES, FakeSearxng, FakeSite, FakeTavily
from scripted import SUB_QUERIES

QUESTION = "Why was Kestrel Works built and what did it cost?"
BLOCKED = [paragraphs[0] for _, _, paragraphs in OTHER_PAGES.values()]
# Old enough that the sample pages (2024, 2025) are recent and the 2019 one is not.
SINCE_2024 = (date.today() - date(2024, 1, 1)).days


@pytest.fixture
def site():
    with FakeSite() as server:
        yield server


@pytest.fixture
def named_hosts(monkeypatch):
    """Every name under .test resolves to the loopback, so the fake site has many domains."""
    resolve = socket.getaddrinfo

    def loopback_for_test_names(host, *args, **kwargs):
        if isinstance(host, str) and host.endswith(".test"):
            host = "127.0.0.1"
        return resolve(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", loopback_for_test_names)


def on(site: FakeSite, host: str, path: str) -> str:
    """The address of `path` on the fake site, under the name `host`."""
    return site.url.replace("127.0.0.1", host) + path


def result(url: str, published: str = "2025-02-01T00:00:00", title: str = "A page") -> dict:
    return {
        "url": url,
        "title": title,
        "content": f"{title}: a snippet.",
        "publishedDate": published,
    }


def searxng_deps(tmp_path, llm_url, store, searxng_url, **overrides) -> Deps:
    settings = Settings(
        data_dir=tmp_path / "data",
        llm_base_url=llm_url,
        llm_api_key="test",
        web_backend="searxng",
        searxng_url=searxng_url,
        web_allow_private_hosts=True,  # the loopback site
        **overrides,
    )
    return Deps(settings, store, get_embedder(settings), chat_model(settings))


def everything_shown(llm) -> str:
    return "\n".join(str(m.get("content", "")) for r in llm.requests for m in r["messages"])


def addresses(text: str) -> list[str]:
    return re.findall(r"https?://[^\s)\]>]+", text)


def test_research_with_searxng_and_no_tavily_key_cites_its_results(
    tmp_path, scripted_llm, sample_store, site
):
    with FakeSearxng(site) as searxng:
        deps = searxng_deps(tmp_path, scripted_llm.url, sample_store, searxng.url)
        result = research(QUESTION, deps.settings, collections=["web"], max_iterations=1, deps=deps)

    assert result.status == "done" and not result.notes, result.notes
    cited = [s.source for s in result.sources]
    # The page that answers the question is cited (the other is read, and not relevant).
    assert site.url + "/kestrel-history" in cited
    assert f"{site.url}/kestrel-history" in result.report.split("## Sources")[1]
    # The same pipeline as Tavily's: every phrasing searched (the question's too: the web was
    # named), pages read in full, dates shown.
    assert sorted(p["q"] for p in searxng.params) == sorted(
        f"{q}{suffix}"
        for q in [QUESTION, *SUB_QUERIES]
        for suffix in ("", " (phrasing 1)", " (phrasing 2)")
    )
    assert all(p["format"] == "json" for p in searxng.params)
    assert site.hits["/kestrel-history"] == 1


def test_a_failing_searxng_is_a_note_and_the_collections_still_answer(
    tmp_path, scripted_llm, sample_store, site
):
    # The site has no /search: as an instance that is down or answers something else.
    deps = searxng_deps(tmp_path, scripted_llm.url, sample_store, site.url)

    result = research(
        QUESTION, deps.settings, collections=["science", "web"], max_iterations=1, deps=deps
    )

    assert result.status == "done" and result.sources
    assert all(not s.source.startswith("http") for s in result.sources)
    assert result.notes and all("SearXNG answered 404" in note for note in result.notes)


def test_a_searxng_with_json_off_is_named_in_the_note(tmp_path, site):
    with FakeSearxng(site) as searxng:
        searxng.formats = {"html"}  # SearXNG's default settings.yml
        settings = Settings(data_dir=tmp_path, web_backend="searxng", searxng_url=searxng.url)
        with pytest.raises(SearchError, match="403 Forbidden .is json in the instance's search"):
            SearxngSearch(settings).search("Kestrel Works")


def test_excluded_domains_never_reach_a_report_even_through_a_redirect(
    tmp_path, scripted_llm, sample_store, site, named_hosts
):
    site.redirects["/moved"] = on(site, "blocked.test", "/blocked-landing")
    # Best first; the first two are read in full, the others kept as snippets.
    results = [
        result(on(site, "news.test", "/kestrel-history"), "2024-05-02"),
        result(on(site, "news.test", "/moved")),  # redirects into blocked.test
        result(on(site, "blog.blocked.test", "/blocked-opinion")),  # a subdomain
        result(on(site, "unblocked.test", "/lake-news"), "2025-01-15"),  # not a subdomain
    ]
    with FakeSearxng(site, results) as searxng:
        deps = searxng_deps(
            tmp_path,
            scripted_llm.url,
            sample_store,
            searxng.url,
            web_exclude_domains="Blocked.test",
            web_fetch_pages=2,
        )
        result_ = research(
            QUESTION, deps.settings, collections=["web"], max_iterations=1, deps=deps
        )

    everywhere = [
        *addresses(result_.report),
        *(s.source for s in result_.sources),
        *addresses(" ".join(result_.notes)),
    ]
    hosts = {host_of(url) for url in everywhere}
    assert "news.test" in hosts and hosts <= {"news.test", "unblocked.test"}, everywhere
    shown = everything_shown(scripted_llm)
    assert not any(sentence in shown or sentence in result_.report for sentence in BLOCKED)
    # The excluded pages were never asked for; the redirect was refused before its hop.
    assert site.hits["/blocked-opinion"] == 0 and site.hits["/blocked-landing"] == 0
    assert site.hits["/moved"] >= 1 and site.hits["/kestrel-history"] == 1


def test_an_excluded_final_address_in_the_page_cache_is_refused_too(
    tmp_path, scripted_llm, sample_store, site, named_hosts
):
    site.redirects["/moved"] = on(site, "blocked.test", "/blocked-landing")
    results = [result(on(site, "news.test", "/moved"))]
    with FakeSearxng(site, results) as searxng:
        before = searxng_deps(tmp_path, scripted_llm.url, sample_store, searxng.url)
        assert before.web.search("Kestrel Works", before.llm).chunks  # cached, unfiltered
        after = searxng_deps(
            tmp_path,
            scripted_llm.url,
            sample_store,
            searxng.url,
            web_exclude_domains="blocked.test",
        )
        found = after.web.search("Kestrel Works", after.llm)

    assert found.chunks == [] and found.notes == []
    assert site.hits["/blocked-landing"] == 1  # the first run only


def test_max_age_drops_an_old_result_and_an_old_page_and_keeps_undated_ones(
    tmp_path, scripted_llm, sample_store, site, named_hosts
):
    old_dated = on(site, "news.test", "/old-report")
    old_page = on(site, "archive.test", "/old-report")  # undated result, the page says 2019
    results = [
        result(on(site, "news.test", "/kestrel-history"), "2024-05-02T08:00:00Z"),
        result(old_dated, "2019-06-01T00:00:00"),
        result(old_page, ""),
        {"url": on(site, "news.test", "/lake-news"), "title": "Lake news", "content": "Undated."},
    ]
    with FakeSearxng(site, results) as searxng:
        deps = searxng_deps(
            tmp_path,
            scripted_llm.url,
            sample_store,
            searxng.url,
            web_max_age_days=SINCE_2024,
            web_fetch_pages=4,
        )
        found = deps.web.search("Kestrel Works history", deps.llm)

    sources = {chunk.source for chunk in found.chunks}
    assert sources == {
        on(site, "news.test", "/kestrel-history"),
        on(site, "news.test", "/lake-news"),
    }
    assert all("still a plan waiting" not in chunk.text for chunk in found.chunks)
    assert not found.notes
    assert site.hits["/old-report"] == 1  # the undated result's page was read, then dropped


def test_include_domains_keeps_only_those_and_their_subdomains(
    tmp_path, scripted_llm, sample_store, site, named_hosts
):
    results = [
        result(on(site, "news.test", "/kestrel-history")),
        result(on(site, "blog.blocked.test", "/blocked-opinion")),
        result(on(site, "mirror.news.test", "/lake-news")),
        result(on(site, "othernews.test", "/blocked-landing")),
    ]
    with FakeSearxng(site, results) as searxng:
        deps = searxng_deps(
            tmp_path,
            scripted_llm.url,
            sample_store,
            searxng.url,
            web_include_domains="news.test",
            web_fetch_pages=1,  # the others are kept as snippets, unless filtered out
        )
        result_ = research(
            QUESTION, deps.settings, collections=["web"], max_iterations=1, deps=deps
        )

    cited = {host_of(s.source) for s in result_.sources}
    assert "news.test" in cited and cited <= {"news.test", "mirror.news.test"}
    assert site.hits["/blocked-opinion"] == 0 and site.hits["/blocked-landing"] == 0


def test_tavily_is_asked_to_filter_and_its_results_are_still_checked(
    tmp_path, scripted_llm, sample_store, site
):
    with FakeTavily(site) as tavily:  # it ignores the filters: every result is on 127.0.0.1
        settings = Settings(
            data_dir=tmp_path / "data",
            llm_base_url=scripted_llm.url,
            llm_api_key="test",
            tavily_api_key=KEY,
            tavily_base_url=tavily.url,
            web_allow_private_hosts=True,
            web_include_domains="news.test",
            web_exclude_domains="ads.test",
            web_max_age_days=30,
        )
        deps = Deps(settings, sample_store, get_embedder(settings), chat_model(settings))
        result_ = research(
            QUESTION, settings, collections=["science", "web"], max_iterations=1, deps=deps
        )

    assert tavily.bodies and all(
        body["include_domains"] == ["news.test"]
        and body["exclude_domains"] == ["ads.test"]
        and body["time_range"] == "month"
        for body in tavily.bodies
    )
    assert result_.sources and all(not s.source.startswith("http") for s in result_.sources)
    assert all(site.hits[path] == 0 for path in PAGES)


def test_searxng_is_asked_for_the_time_range_that_covers_max_age(tmp_path, site):
    with FakeSearxng(site) as searxng:
        for days, expected in ((1, "day"), (5, "week"), (30, "month"), (200, "year"), (400, None)):
            settings = Settings(
                data_dir=tmp_path,
                web_backend="searxng",
                searxng_url=searxng.url + "/",
                web_max_age_days=days,
            )
            SearxngSearch(settings).search("Kestrel Works")
            assert searxng.params[-1].get("time_range") == expected, days


def test_searxng_without_an_address_is_a_clear_error(settings, deps):
    searxng = settings.model_copy(update={"web_backend": "searxng", "tavily_api_key": KEY})
    deps = Deps(searxng, deps.store, deps.embedder, deps.llm)

    assert deps.web is None  # a Tavily key does not count when SearXNG is chosen
    with pytest.raises(UserError, match="needs a SearXNG address: set DEEPSIFT_SEARXNG_URL"):
        research(QUESTION, searxng, web=True, deps=deps)


def test_web_settings_are_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("DEEPSIFT_WEB_BACKEND", "searxng")
    monkeypatch.setenv("DEEPSIFT_SEARXNG_URL", "http://127.0.0.1:8888/")
    monkeypatch.setenv("DEEPSIFT_WEB_EXCLUDE_DOMAINS", " Ads.test, *.spam.test,https://x.test/a ,")
    monkeypatch.setenv("DEEPSIFT_WEB_MAX_AGE_DAYS", "30")

    settings = load_settings()

    assert settings.web_backend == "searxng" and settings.searxng_url == "http://127.0.0.1:8888"
    assert settings.web_exclude_domains == ["ads.test", "spam.test", "x.test"]
    assert settings.web_include_domains == [] and settings.web_max_age_days == 30
    monkeypatch.setenv("DEEPSIFT_SEARXNG_URL", "127.0.0.1:8888")
    with pytest.raises(SettingsError, match="DEEPSIFT_SEARXNG_URL"):
        load_settings()
    monkeypatch.setenv("DEEPSIFT_WEB_BACKEND", "bing")
    with pytest.raises(SettingsError, match="one of tavily, searxng"):
        load_settings()


def test_a_domain_covers_itself_and_its_subdomains_only():
    rule = WebFilter(include=("example.test",), exclude=("ads.example.test",))

    assert rule.allows_url("https://example.test/a") and rule.allows_url("http://www.example.test")
    assert rule.allows_url("https://EXAMPLE.test./b")
    assert not rule.allows_url("https://ads.example.test/x")
    assert not rule.allows_url("https://x.ads.example.test/x")
    assert not rule.allows_url("https://badexample.test/") and not rule.allows_url("not a url")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2024-05-02", datetime(2024, 5, 2, tzinfo=UTC)),
        ("2024-05-02T08:00:00Z", datetime(2024, 5, 2, 8, tzinfo=UTC)),
        ("2024-05-02T10:00:00+02:00", datetime(2024, 5, 2, 8, tzinfo=UTC)),
        ("Thu, 02 May 2024 08:00:00 GMT", datetime(2024, 5, 2, 8, tzinfo=UTC)),
        ("", None),
        ("last Tuesday", None),
    ],
)
def test_published_dates_are_read_in_the_forms_backends_use(text, expected):
    assert parse_date(text) == expected
    now = datetime(2024, 6, 1, tzinfo=UTC)
    assert WebFilter(max_age_days=31).is_recent(text, now) is (
        expected is None or expected.month == 5
    )
    assert not WebFilter(max_age_days=20).is_recent("2024-05-02", now)
