"""``scopa zoo``: the trained agents shipped with the kit, their games and their results."""

from __future__ import annotations

import argparse
import json


def add_zoo_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "zoo",
        help="list the trained agents shipped with the kit (zoo:NAME) and their results",
        description="List the trained agents shipped with the kit, usable as zoo:NAME wherever an agent is named "
        "(scopa eval, tournament, play --opponent, web --opponent), with their game and measured results.",
    )
    p.add_argument("name", nargs="?", help="show the whole model card of zoo:NAME")
    p.add_argument("--json", action="store_true", help="with NAME: print the card as its JSON file holds it")
    p.set_defaults(func=_zoo)
    return p


def _zoo(args: argparse.Namespace) -> int:
    from train import zoo

    if args.name:
        if args.json:
            print(json.dumps(zoo.card(args.name), indent=2))
        else:
            from train.zoo.page import section

            print("\n".join(section(args.name)).strip())
    else:
        print(zoo.describe())
    return 0
