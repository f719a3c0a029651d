"""``scopa web``: play against the agents in the browser.

The server (:mod:`scopa_app.web.server`, FastAPI) is authoritative: the page only ever
receives what the human's seat may see (built from :class:`~scopa_env.engine.game.PlayerView`),
and every action is checked against the legal moves. The page (``static/``) is plain
HTML, CSS and JavaScript that draws the cards as SVG, so nothing is downloaded at run time.

The command binds its port before it prints the address, so a port in use is an error
(with a free one suggested), never a link to someone else's server.

Forwarded headers (``X-Forwarded-For``) are trusted only from the proxies named with
``--trusted-proxy``; by default none, so the per-address limit on new sessions counts the
address that connected, and no client can pose as many by forging the header.

This module only registers the subcommand; FastAPI and uvicorn (the ``web`` extra) are
imported when the command runs.
"""

from __future__ import annotations

import argparse
import errno
import ipaddress
import socket

DEFAULT_PORT = 8000
DESCRIPTION = """Serve a page to play Scopa against the agents in your browser (you are player_0).
The page offers every rules preset (the 52-card game french_52 with 8 players included), and the
built-in agents plus --opponent."""


def port_arg(text: str) -> int:
    """argparse type for ``--port``: 0 (any free port) to 65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a port number from 0 (any free port) to 65535, got {text!r}"
        ) from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number from 0 (any free port) to 65535, got {port}")
    return port


def proxy_arg(text: str) -> str:
    """argparse type for ``--trusted-proxy``: an IP address or network (``10.0.0.0/8``)."""
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be the IP address or network of your reverse proxy (e.g. 127.0.0.1), got {text!r}"
        ) from None
    return text


def uvicorn_config(app, trusted_proxies: list[str] | tuple[str, ...] = ()):
    """The uvicorn settings of ``scopa web``: forwarded headers are read only from ``trusted_proxies``.

    uvicorn's own default trusts ``X-Forwarded-For`` from any local client, so a client on the
    machine (or a local proxy passing the header through) could name a new address with every
    request and lift the per-address session limit.
    """
    import uvicorn

    proxies = list(trusted_proxies)
    return uvicorn.Config(app, log_level="warning", proxy_headers=bool(proxies), forwarded_allow_ips=proxies or None)


def add_web_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``scopa web``."""
    from scopa_app.play import agents_help, default_opponent

    p = subparsers.add_parser(
        "web",
        help="serve a page to play against the agents in the browser",
        description=DESCRIPTION,
    )
    p.add_argument(
        "--port", type=port_arg, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: any free port)"
    )
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1, this machine only)")
    p.add_argument(
        "--opponent",
        default=None,
        metavar="AGENT",
        help=f"default opponent (default {default_opponent()}, the zoo's agent for the standard 2-player game): "
        f"{agents_help()}; the page offers the built-in "
        "agents and this one (a checkpoint is loaded once, at start)",
    )
    p.add_argument(
        "--allow-seeds",
        action="store_true",
        help="let the page choose the deal's seed (tests and demos only: a known seed reveals every hidden card)",
    )
    p.add_argument(
        "--trusted-proxy",
        type=proxy_arg,
        action="append",
        default=[],
        metavar="ADDR",
        help="the address (or network) of a reverse proxy whose X-Forwarded-For header names the client; "
        "repeat for several (default: none, forwarded headers are ignored)",
    )
    p.set_defaults(func=_web_command)
    return p


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``.

    Raises:
        ValueError: the port is taken or the host cannot be listened on (one line, with what to do).
    """
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        raise ValueError(f"cannot listen on host {host!r}: {exc.strerror}") from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ValueError(
                f"port {port} on {host} is already in use (another server?); choose another with --port, "
                f"e.g. --port {port + 1 if port < 65535 else 8080}, or --port 0 for any free one"
            ) from None
        raise ValueError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def _web_command(args: argparse.Namespace) -> int:
    try:
        import uvicorn  # noqa: F401  (the web extra: checked before anything is loaded)

        from scopa_app.web.server import create_app
    except ModuleNotFoundError as exc:
        raise ValueError(f"{exc.name} is missing: install the web extra (pip install -e '.[web]')") from None
    try:
        from scopa_app.play import default_opponent

        args.opponent = args.opponent or default_opponent()
        app = create_app(default_opponent=args.opponent, allow_client_seeds=args.allow_seeds)
    except (ValueError, FileNotFoundError) as exc:
        raise ValueError(f"--opponent {args.opponent}: {exc}") from None
    sock = bind(args.host, args.port)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    print(f"Scopa: open http://{shown}:{port}/ in your browser (Ctrl-C stops the server)", flush=True)
    if args.allow_seeds:
        print("  --allow-seeds: the page may choose deals by seed; do not use this for real games", flush=True)
    if args.trusted_proxy:
        print(f"  client addresses are read from X-Forwarded-For sent by {', '.join(args.trusted_proxy)}", flush=True)
    server = uvicorn.Server(uvicorn_config(app, args.trusted_proxy))
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
    return 0
