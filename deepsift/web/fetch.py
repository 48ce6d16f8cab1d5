"""Fetch a result page and read its main text: public addresses only, bounded in size and time,
cached on disk so a repeated run does not download the same page again."""

import hashlib
import ipaddress
import json
import os
import re
import socket
import tempfile
import threading
import time
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx
import lxml.html
import trafilatura
from lxml.etree import ParserError

from deepsift.config import Settings
from deepsift.web.filters import WebFilter

USER_AGENT = "deepsift/0.1 (+research agent)"
# The content encodings a page may come in, inflated here step by step (zlib's wbits).
_DECOMPRESSED = {
    "gzip": 16 + zlib.MAX_WBITS,
    "x-gzip": 16 + zlib.MAX_WBITS,
    "deflate": zlib.MAX_WBITS,
}
MAX_REDIRECTS = 3
MAX_WORKERS = 8
_READABLE_TYPES = {"text/html", "application/xhtml+xml", "text/plain"}
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([\w.:-]+)""", re.IGNORECASE)
_INVISIBLE = "//script | //style | //noscript | //template"
_BLOCKS = ("p", "div", "section", "article", "li", "tr", "br", "h1", "h2", "h3", "h4", "h5", "h6")

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
AddressPolicy = Callable[[Address], bool]


class FetchError(Exception):
    """A page that could not be fetched; str(e) is one line naming the URL and why."""


class ExcludedPage(FetchError):
    """A page that leads to a domain the web filters refuse (web_include/exclude_domains)."""


@dataclass(frozen=True)
class Page:
    url: str  # the URL asked for
    final_url: str  # after redirects
    title: str
    text: str  # main text, paragraphs separated by blank lines
    published: str  # ISO date if the page states one, else ""


@dataclass(frozen=True)
class PdfFile:
    """A PDF fetched to ingest (deepsift.web.pages): its bytes, read as a file is."""

    url: str
    final_url: str
    body: bytes


# IPv6 prefixes whose last 32 bits are an IPv4 address that traffic may reach: IPv4-compatible
# (deprecated, still tunnelled by some hosts), IPv4-translated (SIIT) and NAT64's well-known
# prefix.
_IPV4_SUFFIXED = tuple(
    ipaddress.ip_network(prefix) for prefix in ("::/96", "::ffff:0:0:0/96", "64:ff9b::/96")
)
# NAT64's local-use prefix (RFC 8215): a translator inside some network, which places the IPv4
# address where its own prefix length says. Python calls it global; it never is.
_LOCAL_NAT64 = ipaddress.ip_network("64:ff9b:1::/48")


def is_public(address: Address) -> bool:
    """Globally routable unicast; an IPv4 address embedded in IPv6 is judged as itself."""
    if isinstance(address, ipaddress.IPv6Address):
        if address in _LOCAL_NAT64:
            return False
        if any(address in network for network in _IPV4_SUFFIXED):
            address = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        else:
            address = address.ipv4_mapped or address.sixtofour or address
    return address.is_global and not address.is_multicast


def _any_address(address: Address) -> bool:
    return True


def _parse(url: str) -> httpx.URL:
    try:
        return httpx.URL(url)
    except httpx.InvalidURL as e:
        raise FetchError(f"{url}: not a valid URL ({e})") from None


def _checked_address(target: httpx.URL, is_allowed: AddressPolicy, label: str) -> str:
    """The address to connect to for target, once every address of its host passed is_allowed."""
    if target.scheme not in ("http", "https") or not target.host:
        raise FetchError(f"{label}: only http and https URLs with a host are fetched")
    host = target.raw_host.decode("ascii")
    port = target.port or (443 if target.scheme == "https" else 80)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as e:
        raise FetchError(f"{label}: cannot resolve {host} ({e})") from None
    addresses = [ipaddress.ip_address(info[4][0]) for info in infos]
    # One refused address is enough: the connection could go to any of them.
    for address in addresses:
        if not is_allowed(address):
            raise FetchError(f"{label}: refused, {host} has the non-public address {address}")
    return str(addresses[0])


class PageFetcher:
    """Downloads pages for the web source; one instance may be shared between threads."""

    def __init__(self, settings: Settings, is_allowed_address: AddressPolicy | None = None) -> None:
        self._settings = settings
        self._is_allowed = is_allowed_address or (
            _any_address if settings.web_allow_private_hosts else is_public
        )
        self._filter = WebFilter.from_settings(settings)
        self._ssl_context = httpx.create_ssl_context()  # once: loading CA certificates is slow
        self._lock = threading.Lock()
        self._url_locks: dict[str, threading.Lock] = {}
        self.network_fetches = 0  # pages downloaded, not served from the cache

    def fetch(self, url: str) -> Page:
        # Searches running side by side often find the same page: one downloads it, the
        # others wait for it and read it from the cache.
        with self._lock:
            url_lock = self._url_locks.setdefault(url, threading.Lock())
        with url_lock:
            page = self._cached(url)
            if page is not None:  # cached under another policy (a run that allowed more)
                for address in dict.fromkeys([url, page.final_url]):
                    _checked_address(_parse(address), self._is_allowed, url)
            if page is None:
                page = self._download(url)
                self._store(page)
                with self._lock:
                    self.network_fetches += 1
        if not self._filter.allows_url(page.final_url):  # a page cached before the filter
            raise ExcludedPage(f"{url}: leads to {page.final_url}, an excluded domain")
        return page

    def fetch_document(self, url: str) -> Page | PdfFile:
        """`url` downloaded now (a page a run cached may have changed), a PDF as well as a page:
        what `deepsift ingest URL` stores. A page goes to the cache for the runs after."""
        document = self._download(url, pdf=True)
        if isinstance(document, Page):
            self._store(document)
        with self._lock:
            self.network_fetches += 1
        return document

    def fetch_many(self, urls: list[str]) -> dict[str, Page | FetchError]:
        """Each URL's page or failure, in the order given; the downloads run side by side."""
        unique = list(dict.fromkeys(urls))
        if not unique:
            return {}
        with ThreadPoolExecutor(max_workers=min(MAX_WORKERS, len(unique))) as pool:
            return dict(zip(unique, pool.map(self._page_or_error, unique), strict=True))

    def _page_or_error(self, url: str) -> Page | FetchError:
        try:
            return self.fetch(url)
        except FetchError as e:
            return e

    def _download(self, url: str, pdf: bool = False) -> Page | PdfFile:
        target = _parse(url)
        deadline = time.monotonic() + self._settings.web_timeout
        # A client per page: no cookies or connections carry over from one site to another.
        with httpx.Client(
            headers={"User-Agent": USER_AGENT, "Accept-Encoding": ", ".join(_DECOMPRESSED)},
            timeout=httpx.Timeout(self._settings.web_timeout),
            verify=self._ssl_context,
            follow_redirects=False,  # each hop is checked before it is requested
            trust_env=False,  # a proxy would connect to addresses we never checked
            # Never reused: a TLS connection made for one hop's name would serve the next hop.
            limits=httpx.Limits(max_keepalive_connections=0),
        ) as client:
            for hop in range(MAX_REDIRECTS + 1):
                label = url if hop == 0 else f"{url} (redirected to {target})"
                if not self._filter.allows_url(str(target)):  # never asked for
                    raise ExcludedPage(f"{label}: an excluded domain")
                address = _checked_address(target, self._is_allowed, label)
                # Connect to the address just checked rather than the name, so a second DNS answer
                # cannot point us elsewhere (DNS rebinding); Host and TLS (SNI and certificate)
                # still use the name.
                host = target.raw_host.decode("ascii")
                request = client.build_request(
                    "GET",
                    target.copy_with(host=address),
                    headers={"Host": target.netloc.decode("ascii")},
                    extensions={"sni_hostname": host},
                )
                try:
                    response = self._sent_by(client, request, deadline, label)
                    try:
                        if not response.has_redirect_location:
                            return self._read(url, str(target), response, deadline, pdf)
                        target = target.join(response.headers["Location"])
                    finally:
                        response.close()
                except (httpx.HTTPError, httpx.InvalidURL) as e:
                    reason = " ".join(str(e).split()) or type(e).__name__
                    raise FetchError(f"{label}: {reason}") from None
        raise FetchError(f"{url}: more than {MAX_REDIRECTS} redirects")

    def _sent_by(
        self, client: httpx.Client, request: httpx.Request, deadline: float, label: str
    ) -> httpx.Response:
        """`client.send(request)`, given up at `deadline`: httpx's timeout bounds each wait for
        bytes, so a server that sends its headers a line at a time held a fetch for minutes."""
        sent: list[httpx.Response | BaseException] = []

        def send() -> None:
            try:
                sent.append(client.send(request, stream=True))
            except BaseException as e:  # raised again in the caller's thread
                sent.append(e)

        worker = threading.Thread(target=send, name="deepsift-fetch", daemon=True)
        worker.start()
        worker.join(max(0.0, deadline - time.monotonic()))
        if worker.is_alive():
            client.close()  # its connection closed: the worker ends at the server's next bytes
            raise FetchError(f"{label}: took longer than {self._settings.web_timeout:g} s")
        if isinstance(sent[0], BaseException):
            raise sent[0]
        return sent[0]

    def _read(
        self, url: str, final_url: str, response: httpx.Response, deadline: float, pdf: bool
    ) -> Page | PdfFile:
        if not response.is_success:
            raise FetchError(f"{url}: HTTP status {response.status_code}")
        media_type = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if pdf and media_type == "application/pdf":
            body = self._body(url, response, self._settings.max_file_bytes, deadline)
            return PdfFile(url, final_url, body)
        if media_type not in _READABLE_TYPES:
            raise FetchError(f"{url}: not a readable page (content type {media_type or 'none'})")
        body = self._body(url, response, self._settings.web_max_page_bytes, deadline)
        text = _decode(body, response.charset_encoding)
        if media_type == "text/plain":
            title, text, published = "", text.strip(), ""
        else:
            title, text, published = _main_text(text)
        if not text:
            raise FetchError(f"{url}: no readable text")
        return Page(url, final_url, title, text, published)

    def _body(self, url: str, response: httpx.Response, limit: int, deadline: float) -> bytes:
        too_large = FetchError(f"{url}: larger than {limit} bytes")
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > limit:
            raise too_large
        encoding = response.headers.get("Content-Encoding", "").strip().lower() or "identity"
        if encoding not in ("identity", *_DECOMPRESSED):
            raise FetchError(f"{url}: content encoding {encoding!r} is not read")
        inflate = zlib.decompressobj(_DECOMPRESSED[encoding]) if encoding != "identity" else None
        body = bytearray()
        try:
            for chunk in response.iter_raw():
                # Inflated no further than the limit: a small body of zeros can inflate to GBs.
                body += inflate.decompress(chunk, limit + 1 - len(body)) if inflate else chunk
                if len(body) > limit:
                    raise too_large
                # The timeout bounds each wait; this bounds a server that trickles bytes.
                if time.monotonic() > deadline:
                    raise FetchError(f"{url}: took longer than {self._settings.web_timeout} s")
            body += inflate.flush() if inflate else b""
        except zlib.error as e:
            raise FetchError(f"{url}: its {encoding} body is corrupt ({e})") from None
        if len(body) > limit:
            raise too_large
        return bytes(body)

    def _cache_path(self, url: str) -> Path:
        return self._settings.web_cache_dir / f"{hashlib.sha256(url.encode()).hexdigest()}.json"

    def _cached(self, url: str) -> Page | None:
        try:
            entry = json.loads(self._cache_path(url).read_text(encoding="utf-8"))
            fetched_at = float(entry.pop("fetched_at"))
            page = Page(**entry)
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return None  # absent or corrupt: fetched again, and the entry rewritten
        return page if time.time() - fetched_at < self._settings.web_cache_ttl else None

    def _store(self, page: Page) -> None:
        path = self._cache_path(page.url)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Written beside the entry, then renamed over it: a crash leaves the old entry or none.
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                json.dump({**asdict(page), "fetched_at": time.time()}, file)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise


def _decode(body: bytes, charset: str | None) -> str:
    """Decode with the header's charset, else the page's <meta charset>, else UTF-8."""
    declared = _META_CHARSET.search(body[:1024])
    for encoding in (charset, declared and declared.group(1).decode("ascii")):
        if encoding:
            try:
                return body.decode(encoding, errors="replace")
            except LookupError:
                pass  # a charset name Python does not know
    return body.decode("utf-8", errors="replace")


def _main_text(html: str) -> tuple[str, str, str]:
    """Title, main text and date of a page; all visible text when trafilatura finds no article."""
    document = trafilatura.bare_extraction(
        html, include_comments=False, include_tables=True, favor_recall=True, with_metadata=True
    )
    if document is not None and document.text:
        return document.title or "", _paragraphs(document.text), document.date or ""
    try:
        tree = lxml.html.document_fromstring(html)
    except (ParserError, ValueError):
        return "", "", ""
    for element in tree.xpath(_INVISIBLE):
        element.drop_tree()
    # text_content() runs blocks together; a line break around each keeps them apart.
    for element in tree.iter(*_BLOCKS):
        element.text = "\n" + (element.text or "")
        element.tail = "\n" + (element.tail or "")
    title = " ".join(tree.findtext(".//title", "").split())
    body = tree.find("body")
    return title, _paragraphs(body.text_content() if body is not None else ""), ""


def _paragraphs(text: str) -> str:
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n\n".join(line for line in lines if line)
