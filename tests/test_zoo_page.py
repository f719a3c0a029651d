"""docs/zoo.md is generated from the model cards (train/zoo/page.py): it must be what the cards give now,
and every shipped agent has its section and its results there."""

from __future__ import annotations

from train import zoo
from train.zoo import page


def test_zoo_page_is_what_the_cards_give(tmp_path):
    out = tmp_path / "zoo.md"
    assert page.main(["--out", str(out)]) == 0
    assert page.PAGE.read_text() == out.read_text(), (
        "docs/zoo.md is stale or edited by hand: run python -m train.zoo.page"
    )


def test_check_mode_fails_on_a_stale_page(tmp_path):
    out = tmp_path / "zoo.md"
    out.write_text(page.render().replace("heuristic", "greedy"))
    assert page.main(["--out", str(out), "--check"]) == 1
    out.write_text(page.render())
    assert page.main(["--out", str(out), "--check"]) == 0


def test_every_agent_has_a_section_with_its_card_results():
    text = page.render()
    for name in zoo.names():
        c = zoo.card(name)
        assert f"## `zoo:{name}`" in text
        for r in c["results"]:
            assert f"{r['margin']:+.3f} [{r['margin_lo']:+.3f}, {r['margin_hi']:+.3f}]" in text


def test_scopa_zoo_name_prints_a_readable_card_and_json_on_request(scopa_cli):
    """``scopa zoo NAME`` prints the card as the zoo page shows it (issue 49: it printed raw JSON);
    ``--json`` still gives the file's JSON."""
    import json

    name = zoo.names()[0]
    shown = scopa_cli("zoo", name)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(f"## `zoo:{name}`") and "| opponent |" in shown.stdout
    assert not shown.stdout.lstrip().startswith("{")
    raw = scopa_cli("zoo", name, "--json")
    assert raw.returncode == 0 and json.loads(raw.stdout) == zoo.card(name)
