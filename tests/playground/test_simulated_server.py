"""The simulated server's pieces that are not the link itself (the CLI test drives the link)."""

from __future__ import annotations

from bridge.link.messages import PlayerRef, SnapshotPlayerResult, Text
from bridge.playground.simulated_server import OP_NODES, PLAYER_NODES, Player, plain


def test_a_text_shows_as_a_client_shows_it_without_colours() -> None:
    text = Text(
        template="<gold><name></gold> asks you:<newline><question> <b>now</b>",
        values={"name": "<Mine>claw"},
        model={"question": "a <red>red</red> word?"},
    )
    # Style tags of the template and of model text go; a plain value is shown as it came.
    assert plain(text) == "<Mine>claw asks you: a red word? now"


def test_players_get_plugin_yml_nodes_and_stable_uuids() -> None:
    steve, op = Player("Steve"), Player("Steve", op=True)
    assert steve.ref == op.ref == PlayerRef(uuid=steve.ref.uuid, name="Steve")
    assert Player("Alex").ref.uuid != steve.ref.uuid
    assert "mineclaw.command.reload" not in steve.granted
    assert set(PLAYER_NODES) < set(op.granted) == set(OP_NODES)
    assert "mineclaw.bypass.ratelimit" not in op.granted


def test_the_fixed_world_is_a_valid_snapshot_of_the_asking_player() -> None:
    from bridge.playground.simulated_server import _snapshot

    snapshot = _snapshot("snapshot.player", Player("Alex"))
    assert isinstance(snapshot, SnapshotPlayerResult)
    assert snapshot.player.name == "Alex"
