"""Who the web app answers: with a token, only requests that carry it; without, only requests
addressed to a loopback name; every answer with the security headers; and JSON bodies read no
further than MAX_JSON_BYTES."""

import hmac
import json
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from deepsift.serve import is_loopback

TOKEN_COOKIE = "deepsift_token"
# A run's or a follow-up's JSON: a question of 4,000 characters fits with room to spare, even
# written as \uXXXX escapes. Files come as uploads (serve_max_upload_bytes).
MAX_JSON_BYTES = 64_000
# Sent with every answer: no framing (clickjacking), no script but the page's own file (a
# report or document that smuggled markup in runs nothing), no sniffing, no referrer.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
    "form-action 'self'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


class Guard:
    """Refuse what this server must not answer: with a token, any request without it; without
    one, requests addressed to a name other than loopback (DNS rebinding). Requests that change
    something must come from this server's own page when they say where they come from."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers.setdefault(name, value)
            await send(message)

        request = Request(scope)
        refusal = self._refusal(request)
        if refusal:
            status, message = refusal
            refused = JSONResponse({"error": message}, status_code=status)
            await refused(scope, receive, with_headers)
            return
        await self.app(scope, receive, with_headers)

    def _refusal(self, request: Request) -> tuple[int, str] | None:
        host = request.headers.get("host", "")
        if self.token:
            given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
            given = given or request.cookies.get(TOKEN_COOKIE, "")
            if request.url.path == "/":  # the printed link, once: it sets the cookie
                given = given or request.query_params.get("token", "")
            if not hmac.compare_digest(given.encode(), self.token.encode()):
                return 401, (
                    "this server needs its token: Authorization: Bearer T, or open the link "
                    "deepsift serve printed"
                )
        elif not is_loopback(urlsplit(f"//{host}").hostname or ""):
            return 403, f"this server answers only on loopback names, not {host!r}"
        origin = request.headers.get("origin")
        if request.method not in ("GET", "HEAD") and origin and urlsplit(origin).netloc != host:
            return 403, f"requests from {origin} are not accepted"
        return None


class TooLarge(Exception):
    """A request's body over MAX_JSON_BYTES: HTTP 413."""


async def json_body(request: Request) -> Any:
    """The request's JSON, read no further than MAX_JSON_BYTES (a body that does not say its
    size is counted as it comes); TooLarge past it, ValueError when it is not JSON."""
    refusal = TooLarge(f"a JSON body may have {MAX_JSON_BYTES:,} bytes at most")
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > MAX_JSON_BYTES:
        raise refusal
    body = bytearray()
    async for piece in request.stream():
        body += piece
        if len(body) > MAX_JSON_BYTES:
            raise refusal
    return json.loads(body)
