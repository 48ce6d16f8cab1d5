"""Which web results a run may use: domain allow and deny lists and a recency limit. Backends are
asked to filter where they can, but these checks run on every result they return, and on the
address each page ends at after its redirects."""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

import httpx

from deepsift.config import Settings

# A backend's coarse time ranges, narrowest first, with the days each covers.
TIME_RANGES = (("day", 1), ("week", 7), ("month", 31), ("year", 366))


@dataclass(frozen=True)
class WebFilter:
    include: tuple[str, ...] = ()  # empty: every domain
    exclude: tuple[str, ...] = ()
    max_age_days: int = 0  # 0: no limit

    @classmethod
    def from_settings(cls, settings: Settings) -> "WebFilter":
        return cls(
            tuple(settings.web_include_domains),
            tuple(settings.web_exclude_domains),
            settings.web_max_age_days,
        )

    def allows_url(self, url: str) -> bool:
        """The URL's host is not excluded and, with an allow list, is on it; a domain covers
        itself and its subdomains."""
        host = host_of(url)
        if _under(host, self.exclude):
            return False
        return not self.include or _under(host, self.include)

    def is_recent(self, published: str, now: datetime | None = None) -> bool:
        """Published within max_age_days; a result without a date (or one we cannot read) is
        kept, since most pages state none."""
        if not self.max_age_days:
            return True
        date = parse_date(published)
        if date is None:
            return True
        return (now or datetime.now(UTC)) - date <= timedelta(days=self.max_age_days)

    @property
    def time_range(self) -> str | None:
        """The narrowest backend time range that covers max_age_days (None: no limit)."""
        if not self.max_age_days:
            return None
        return next((name for name, days in TIME_RANGES if self.max_age_days <= days), None)


def host_of(url: str) -> str:
    try:
        return httpx.URL(url).raw_host.decode("ascii").lower().rstrip(".")
    except (httpx.InvalidURL, UnicodeDecodeError):
        return ""


def _under(host: str, domains: tuple[str, ...]) -> bool:
    return any(host == domain or host.endswith("." + domain) for domain in domains)


def parse_date(text: str) -> datetime | None:
    """An ISO 8601 date or time (SearXNG, page metadata) or an RFC 2822 one (Tavily's news), in
    UTC; None when there is none or it cannot be read."""
    text = text.strip()
    if not text:
        return None
    try:
        date = datetime.fromisoformat(text)
    except ValueError:
        try:
            date = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
    return date if date.tzinfo else date.replace(tzinfo=UTC)
