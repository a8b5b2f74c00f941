"""Questions and commands after ``/ai`` do not collide: real questions that start with each
subcommand's word are questions; each command's exact shape is a command; ``new`` with a long
unquoted rest asks which was meant."""

from __future__ import annotations

import pytest

from bridge.app.commands.ai_line import read_ai_line

QUESTIONS = [
    "new players get what?",
    "new to the server, where do I start",
    "list the best enchantments for a sword",
    "list of ores by depth",
    "history of the end dimension",
    "history of this world",
    "switch to creative mode, how",
    "switch 2?",
    "delete a world safely",
    "delete 3 chests full of cobble",
    "rename my dog",
    "rename 2?",
    "clear the weather please",
    "clear?",
    "stop the rain",
    "stop?",
    "persona of the villagers",
    "persona pirate?",
    "what is the best food",
    "new?",
    "list?",
]

COMMANDS = [
    ("new", "new", ()),
    ('new "base ideas"', "new", ("base ideas",)),
    ("new 'Redstone, part 2'", "new", ("Redstone, part 2",)),
    ("new base ideas", "new", ("base", "ideas")),
    ("list", "list", ()),
    ("LIST", "list", ()),
    ("clear", "clear", ()),
    ("stop", "stop", ()),
    ("history", "history", ()),
    ("history 2", "history", ("2",)),
    ("switch 2", "switch", ("2",)),
    # Alone: their usage and the ids (Paper completes these words; sent as they were, they
    # went to the model as one-word questions).
    ("switch", "switch", ()),
    ("rename", "rename", ()),
    ("Delete", "delete", ()),
    ("delete 3", "delete", ("3",)),
    ("rename 2 Nether trip", "rename", ("2", "Nether", "trip")),
    ("persona", "persona", ()),
    ("persona pirate", "persona", ("pirate",)),
    ("persona default", "persona", ("default",)),
    ("persona robot", "persona", ("robot",)),
]


@pytest.mark.parametrize("line", QUESTIONS)
def test_a_question_that_starts_with_a_subcommands_word_is_a_question(line: str) -> None:
    assert read_ai_line(line).kind == "question", line


@pytest.mark.parametrize(("line", "keyword", "rest"), COMMANDS)
def test_a_command_of_its_exact_shape_is_a_command(
    line: str, keyword: str, rest: tuple[str, ...]
) -> None:
    read = read_ai_line(line)
    assert (read.kind, read.keyword, read.rest) == ("command", keyword, rest)


@pytest.mark.parametrize("line", ["new ideas for my castle build", "new plans for the farm now"])
def test_new_with_a_long_unquoted_rest_asks_which_was_meant(line: str) -> None:
    read = read_ai_line(line)
    assert read.kind == "ambiguous" and read.keyword == "new"
