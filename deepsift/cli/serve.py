"""`deepsift serve`: the web app on a loopback address, or elsewhere only behind a token."""

import argparse
import secrets
import signal
import sys

from deepsift.cli.arguments import positive
from deepsift.cli.console import err
from deepsift.config import Settings
from deepsift.errors import UserError
from deepsift.serve import is_loopback


def add_parser(commands: argparse._SubParsersAction) -> None:
    serve = commands.add_parser("serve", help="the web app and its HTTP API")
    serve.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)"
    )
    serve.add_argument("--port", type=positive, default=8000, help="the port (default: 8000)")
    serve.add_argument(
        "--token",
        nargs="?",
        const="",  # --token alone
        default=None,
        help="every request must carry it (required off loopback); without a value, a new random "
        "one, printed in the link (default: DEEPSIFT_SERVE_TOKEN; a value here shows in ps)",
    )
    serve.set_defaults(run=run_serve)


def run_serve(args: argparse.Namespace, settings: Settings) -> int:
    if args.token == "":  # --token alone
        token = secrets.token_urlsafe(18)
    else:
        token = args.token or settings.serve_token
        if args.token:
            err.print(
                "note: a token on the command line shows in ps; give it by DEEPSIFT_SERVE_TOKEN, "
                "or --token alone for a new one",
                highlight=False,
                soft_wrap=True,
            )
    if not is_loopback(args.host) and not token:
        raise UserError(
            f"--host {args.host} is reachable from other machines: give a token that every "
            "request must carry (--token for a new one, or DEEPSIFT_SERVE_TOKEN)"
        )
    try:
        import uvicorn

        from deepsift.serve.app import create_app
    except ImportError as e:
        raise UserError(
            f"deepsift serve needs the serve extra ({e.name} is missing): pip install -e '.[serve]'"
        ) from None
    from deepsift.store.shared import shared_store

    shown = f"[{args.host}]" if ":" in args.host else args.host
    address = f"http://{shown}:{args.port}/"
    # The other commands, run beside the app, open its Milvus Lite file through this server.
    with shared_store(settings, holder=f"deepsift serve on {address}") as settings:
        app = create_app(settings, token=token)
        url = address + (f"?token={token}" if token else "")
        err.print(f"deepsift serve: open {url} (Ctrl-C stops)", highlight=False, soft_wrap=True)
        sys.stderr.flush()
        # uvicorn raises a SIGTERM again once it has stopped: exit through the clean-up.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0
