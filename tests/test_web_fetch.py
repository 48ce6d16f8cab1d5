import gzip
import ipaddress
import socket
import threading
import time
import tracemalloc
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import trafilatura

from deepsift.config import Settings
from deepsift.web.fetch import FetchError, Page, PageFetcher, is_public

ARTICLE = b"""<!doctype html>
<html><head><meta charset="utf-8"><title>Tidal Energy in Practice</title>
<meta property="article:published_time" content="2023-04-05T10:00:00Z"></head>
<body>
<nav><a href="/">Home</a> <a href="/about">About us</a> <a href="/shop">Shop the catalogue</a></nav>
<article><h1>Tidal Energy in Practice</h1>
<p>Tidal turbines convert the kinetic energy of moving seawater into electricity, much as wind
turbines do with air, but water is eight hundred times denser.</p>
<p>The MeyGen array in the Pentland Firth has exported more than fifty gigawatt hours to the grid
since it was commissioned, a record for the industry.</p>
<p>Maintenance remains the main cost: every turbine must be lifted out of the water for inspection,
which needs calm seas and a specialised vessel.</p>
</article>
<footer><p>Copyright Example Media. Subscribe to our newsletter for weekly offers.</p></footer>
</body></html>"""
NOTES = b"Tide tables\n\nHigh water at Aberdeen: 06:12 and 18:40."
LIMIT = 10_000  # the smallest web_max_page_bytes allowed
BOMB = gzip.compress(bytes(64_000_000), compresslevel=9)  # 64 MB of zeros, 62 KB on the wire
DELAY = 0.3


class _Handler(BaseHTTPRequestHandler):
    server: "_Site"

    def do_GET(self) -> None:
        with self.server.lock:
            self.server.hits[self.path] += 1
            self.server.hosts.append(self.headers["Host"])
        path = urlsplit(self.path).path
        if path.startswith("/slow/"):
            time.sleep(DELAY)
            path = path.removeprefix("/slow")
        if path == "/article":
            self._reply(200, "text/html; charset=utf-8", ARTICLE)
        elif path == "/notes.txt":
            self._reply(200, "text/plain", NOTES)
        elif path.startswith("/hop/"):
            left = int(path.removeprefix("/hop/"))
            self._redirect(str(left - 1) if left > 1 else "../article")  # relative Locations
        elif path == "/to-metadata":
            self._redirect("http://169.254.169.254/latest/meta-data")
        elif path == "/huge":
            self._reply(200, "text/html", b"<p>" + b"x" * 2 * LIMIT + b"</p>")
        elif path == "/huge-unsized":
            self._reply(200, "text/html", b"<p>" + b"x" * 2 * LIMIT + b"</p>", sized=False)
        elif path == "/bomb":
            self._reply(200, "text/html", BOMB, sized=False, encoding="gzip")
        elif path == "/gzipped":
            self._reply(200, "text/html; charset=utf-8", gzip.compress(ARTICLE), encoding="gzip")
        elif path == "/blank":
            self._reply(200, "text/html", b"<html><title>Blank</title><script>go()</script></html>")
        elif path == "/paper.pdf":
            self._reply(200, "application/pdf", b"%PDF-1.4 not really")
        else:
            self._reply(404, "text/html", b"<p>not found</p>")

    def _reply(
        self, status: int, content_type: str, body: bytes, sized: bool = True, encoding: str = ""
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        if encoding:
            self.send_header("Content-Encoding", encoding)
        if sized:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()  # unsized: HTTP/1.0, the body ends when the connection closes
        self.wfile.write(body)

    def _redirect(self, location: str) -> None:
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


class _Site(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.hits: Counter[str] = Counter()
        self.hosts: list[str] = []

    @property
    def port(self) -> int:
        return self.server_address[1]

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@pytest.fixture
def site():
    server = _Site()
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _settings(tmp_path: Path, **overrides) -> Settings:
    values = {"web_allow_private_hosts": True, "web_max_page_bytes": LIMIT, **overrides}
    return Settings(data_dir=tmp_path / "data", **values)


def _only_loopback(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return address == ipaddress.ip_address("127.0.0.1")


def test_an_article_is_read_without_its_boilerplate(tmp_path, site):
    page = PageFetcher(_settings(tmp_path)).fetch(site.url("/article"))

    assert "eight hundred times denser" in page.text
    assert "a specialised vessel" in page.text
    assert "\n\n" in page.text
    assert "newsletter" not in page.text and "Shop the catalogue" not in page.text
    assert page.title == "Tidal Energy in Practice"
    assert page.published == "2023-04-05"
    assert page.url == page.final_url == site.url("/article")


def test_without_an_article_the_visible_text_is_read(tmp_path, site, monkeypatch):
    monkeypatch.setattr(trafilatura, "bare_extraction", lambda *args, **kwargs: None)

    page = PageFetcher(_settings(tmp_path)).fetch(site.url("/article"))

    assert page.title == "Tidal Energy in Practice"
    assert "eight hundred times denser" in page.text
    assert "\n\nMaintenance remains the main cost" in page.text
    assert "Shop the catalogue" in page.text
    assert page.published == ""


def test_a_fetched_page_is_served_from_the_disk_cache_until_it_expires(tmp_path, site):
    url = site.url("/article")
    first = PageFetcher(_settings(tmp_path))
    fetched = first.fetch(url)

    again = PageFetcher(_settings(tmp_path))
    assert again.fetch(url) == fetched
    assert again.network_fetches == 0
    assert first.network_fetches == 1
    assert site.hits["/article"] == 1
    assert [p.suffix for p in _settings(tmp_path).web_cache_dir.iterdir()] == [".json"]

    expired = PageFetcher(_settings(tmp_path, web_cache_ttl=0))
    assert expired.fetch(url) == fetched
    assert expired.network_fetches == 1
    assert site.hits["/article"] == 2


def test_a_corrupt_cache_entry_is_a_miss_and_is_rewritten(tmp_path, site):
    url = site.url("/article")
    PageFetcher(_settings(tmp_path)).fetch(url)
    [entry] = _settings(tmp_path).web_cache_dir.iterdir()
    entry.write_text('{"url": "half a wri')

    fetcher = PageFetcher(_settings(tmp_path))
    assert "denser" in fetcher.fetch(url).text
    assert fetcher.network_fetches == 1
    assert site.hits["/article"] == 2
    assert PageFetcher(_settings(tmp_path)).fetch(url).title == "Tidal Energy in Practice"
    assert site.hits["/article"] == 2


class _Dripping:
    """A server that answers every connection one header line at a time, a line every
    `pause` seconds, `lines` of them: each wait is short, the whole is not."""

    def __init__(self, pause: float = 0.3, lines: int = 60) -> None:
        self.pause, self.lines = pause, lines
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.stopped = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._drip, args=(connection,), daemon=True).start()

    def _drip(self, connection: socket.socket) -> None:
        with connection:
            try:
                connection.recv(4096)
                connection.sendall(b"HTTP/1.1 200 OK\r\n")
                for n in range(self.lines):
                    if self.stopped.wait(self.pause):
                        return
                    connection.sendall(f"X-Drip-{n}: x\r\n".encode())
            except OSError:
                return

    def close(self) -> None:
        self.stopped.set()
        self.listener.close()


def test_a_server_that_drips_its_headers_is_given_up_at_the_timeout(tmp_path):
    dripping = _Dripping()
    fetcher = PageFetcher(_settings(tmp_path, web_timeout=1.0))
    started = time.monotonic()
    try:
        with pytest.raises(FetchError, match="took longer than 1 s"):
            fetcher.fetch(f"http://127.0.0.1:{dripping.port}/page")
        waited = time.monotonic() - started
    finally:
        dripping.close()

    assert waited < 5  # the server's headers alone take 18 s


def test_a_gzip_bomb_is_refused_without_inflating_past_the_limit(tmp_path, site):
    fetcher = PageFetcher(_settings(tmp_path))
    tracemalloc.start()
    try:
        with pytest.raises(FetchError, match=f"larger than {LIMIT} bytes"):
            fetcher.fetch(site.url("/bomb"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert peak < 8_000_000  # inflated whole, it takes 64 MB
    assert "eight hundred times denser" in fetcher.fetch(site.url("/gzipped")).text


def test_a_page_cached_under_a_looser_policy_is_refused_under_a_stricter_one(tmp_path, site):
    url = site.url("/article")
    PageFetcher(_settings(tmp_path)).fetch(url)  # an ingest that allowed private hosts

    strict = PageFetcher(_settings(tmp_path, web_allow_private_hosts=False))
    with pytest.raises(FetchError, match="refused"):
        strict.fetch(url)
    assert site.hits["/article"] == 1 and strict.network_fetches == 0


def test_private_and_non_http_urls_are_refused_without_a_request(tmp_path, site):
    fetcher = PageFetcher(_settings(tmp_path, web_allow_private_hosts=False))
    refused = [
        site.url("/article"),
        "http://10.0.0.1/",
        "http://169.254.169.254/latest/meta-data",
        f"http://[::1]:{site.port}/article",
        f"http://[::ffff:127.0.0.1]:{site.port}/article",
        f"http://localhost:{site.port}/article",
        "file:///etc/passwd",
        "ftp://x/",
        "data:text/plain,hello",
    ]
    for url in refused:
        with pytest.raises(FetchError, match="refused|only http"):
            fetcher.fetch(url)

    assert sum(site.hits.values()) == 0


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("93.184.215.14", True),
        ("2606:4700:4700::1111", True),
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("100.64.0.1", False),
        ("169.254.169.254", False),
        ("0.0.0.0", False),
        ("239.1.2.3", False),
        ("::1", False),
        ("fe80::1", False),
        ("fd00::1", False),
        ("ff0e::1", False),
        ("::ffff:127.0.0.1", False),
        ("::ffff:10.0.0.1", False),
        ("::ffff:93.184.215.14", True),
        ("2002:7f00:1::", False),  # 6to4 wrapping 127.0.0.1
        ("::ffff:0:7f00:1", False),  # IPv4-translated 127.0.0.1
        ("::ffff:0:5db8:d70e", True),  # IPv4-translated 93.184.215.14
        ("64:ff9b:1::7f00:1", False),  # NAT64 for local use, wrapping 127.0.0.1
        ("64:ff9b:1:5db8:d70e::", False),  # the same prefix, any place of the address
    ],
)
def test_only_public_unicast_addresses_are_public(address, public):
    assert is_public(ipaddress.ip_address(address)) is public


def test_a_redirect_to_a_private_address_is_refused(tmp_path, site, monkeypatch):
    contacted = []
    connect = socket.create_connection

    def recording_connect(address, *args, **kwargs):
        contacted.append(address[0])
        return connect(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", recording_connect)
    fetcher = PageFetcher(_settings(tmp_path), is_allowed_address=_only_loopback)

    with pytest.raises(FetchError, match="169.254.169.254") as refused:
        fetcher.fetch(site.url("/to-metadata"))

    assert site.url("/to-metadata") in str(refused.value)
    assert site.hits["/to-metadata"] == 1
    assert contacted == ["127.0.0.1"]


def test_the_connection_goes_to_the_address_that_was_checked(tmp_path, site, monkeypatch):
    answers = []
    resolve = socket.getaddrinfo

    def rebinding_dns(host, *args, **kwargs):
        if host != "pages.test":
            return resolve(host, *args, **kwargs)
        answers.append(host)  # the first answer is checked; later ones point elsewhere
        address = "127.0.0.1" if len(answers) == 1 else "10.9.9.9"
        return resolve(address, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding_dns)
    fetcher = PageFetcher(_settings(tmp_path), is_allowed_address=_only_loopback)

    page = fetcher.fetch(f"http://pages.test:{site.port}/article")

    assert page.title == "Tidal Energy in Practice"
    assert site.hosts == [f"pages.test:{site.port}"]


def test_three_redirects_are_followed_and_a_fourth_is_refused(tmp_path, site):
    fetcher = PageFetcher(_settings(tmp_path))

    page = fetcher.fetch(site.url("/hop/3"))
    assert page.final_url == site.url("/article")
    assert "denser" in page.text

    with pytest.raises(FetchError, match="more than 3 redirects"):
        fetcher.fetch(site.url("/hop/4"))
    assert site.hits["/hop/1"] == 2
    assert site.hits["/article"] == 1


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/huge", "larger than 10000 bytes"),
        ("/huge-unsized", "larger than 10000 bytes"),
        ("/paper.pdf", "content type application/pdf"),
        ("/missing", "HTTP status 404"),
        ("/blank", "no readable text"),
    ],
)
def test_pages_that_cannot_be_read_raise_a_fetch_error_naming_the_url(tmp_path, site, path, reason):
    fetcher = PageFetcher(_settings(tmp_path))

    with pytest.raises(FetchError) as failure:
        fetcher.fetch(site.url(path))

    assert str(failure.value).startswith(site.url(path))
    assert reason in str(failure.value)
    assert "\n" not in str(failure.value)
    assert fetcher.network_fetches == 0
    assert not _settings(tmp_path).web_cache_dir.exists()


def test_fetch_many_fetches_concurrently_and_reports_each_outcome(tmp_path, site):
    urls = [site.url(p) for p in ("/slow/article", "/slow/paper.pdf", "/slow/notes.txt")]
    urls.insert(2, site.url("/slow/missing"))
    fetcher = PageFetcher(_settings(tmp_path))

    started = time.monotonic()
    outcomes = fetcher.fetch_many(urls)
    elapsed = time.monotonic() - started

    assert list(outcomes) == urls
    article, pdf, missing, notes = outcomes.values()
    assert isinstance(article, Page) and "denser" in article.text
    assert isinstance(notes, Page) and notes.text == NOTES.decode()
    assert isinstance(pdf, FetchError) and "application/pdf" in str(pdf)
    assert isinstance(missing, FetchError) and "404" in str(missing)
    assert elapsed < 3 * DELAY
    assert fetcher.network_fetches == 2
