"""``scopa web``: play against the agents in the browser.

The server (:mod:`scopa_env.web.server`, FastAPI) is authoritative: the page only ever
receives what the human's seat may see (built from :class:`~scopa_env.game.PlayerView`),
and every action is checked against the legal moves. The page (``static/``) is plain
HTML, CSS and JavaScript that draws the cards as SVG, so nothing is downloaded at run time.

This module only registers the subcommand; FastAPI and uvicorn (the ``web`` extra) are
imported when the command runs.
"""

from __future__ import annotations

import argparse

DEFAULT_PORT = 8000


def add_web_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``scopa web``."""
    from scopa_env.play import DEFAULT_OPPONENT

    p = subparsers.add_parser("web", help="serve a page to play against the agents in the browser")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1, this machine only)")
    p.add_argument(
        "--opponent",
        default=DEFAULT_OPPONENT,
        metavar="NAME",
        help=f"default opponent agent (default {DEFAULT_OPPONENT}); a checkpoint such as ppo:PATH is offered on the page",
    )
    p.set_defaults(func=_web_command)
    return p


def _web_command(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from scopa_env.web.server import create_app
    except ModuleNotFoundError as exc:
        raise ValueError(f"{exc.name} is missing: install the web extra (pip install -e '.[web]')") from None
    app = create_app(default_opponent=args.opponent)
    print(f"Scopa: open http://{args.host}:{args.port}/ in your browser (Ctrl-C stops the server)", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0
