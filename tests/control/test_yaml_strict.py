"""The strict YAML reader refuses everything beyond plain JSON-shaped data, with locations."""

from __future__ import annotations

import pytest
import yaml

from bridge.control import yaml_strict
from bridge.control.problems import ConfigLoadError, Problem
from bridge.control.yaml_strict import load_strict_yaml

PARSERS = [yaml.SafeLoader] + ([yaml.CSafeLoader] if hasattr(yaml, "CSafeLoader") else [])


@pytest.fixture(params=PARSERS, ids=lambda loader: loader.__name__)
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    # Both the libyaml and the pure-Python parser must refuse the same things.
    monkeypatch.setattr(yaml_strict, "_PARSER", request.param)


def refuse(data: bytes, **limits: int) -> Problem:
    with pytest.raises(ConfigLoadError) as caught:
        load_strict_yaml(data, "test.yml", **limits)
    assert len(caught.value.problems) == 1
    problem = caught.value.problems[0]
    assert problem.file == "test.yml"
    return problem


@pytest.mark.usefixtures("parser")
class TestAccepted:
    def test_plain_json_shapes(self) -> None:
        data = b"a: 1\nb:\n  - x\n  - {c: 2.5, d: null, e: true, f: -3}\ng: 'yes'\nh: |\n  text\n"
        document = load_strict_yaml(data, "test.yml")
        assert document.value == {
            "a": 1,
            "b": ["x", {"c": 2.5, "d": None, "e": True, "f": -3}],
            "g": "yes",
            "h": "text\n",
        }

    def test_marks_are_one_based_line_and_column(self) -> None:
        document = load_strict_yaml(b"a:\n  b: 1\n  c:\n    - z\n", "test.yml")
        assert document.marks[("a", "b")] == (2, 3)
        assert document.marks[("a", "c", 0)] == (4, 7)

    def test_leading_utf8_bom_is_dropped(self) -> None:
        assert load_strict_yaml(b"\xef\xbb\xbfa: 1\n", "test.yml").value == {"a": 1}

    def test_tab_inside_a_quoted_value_is_text(self) -> None:
        assert load_strict_yaml(b'a: "x\\ty"\n', "test.yml").value == {"a": "x\ty"}

    def test_empty_file_is_none(self) -> None:
        assert load_strict_yaml(b"", "test.yml").value is None


@pytest.mark.usefixtures("parser")
class TestRefused:
    def test_billion_laughs(self) -> None:
        rows = [b'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
        for index, name in enumerate("bcdefghi"):
            previous = "abcdefghi"[index].encode()
            rows.append(
                name.encode()
                + b": &"
                + name.encode()
                + b" ["
                + b",".join([b"*" + previous] * 9)
                + b"]"
            )
        problem = refuse(b"\n".join(rows) + b"\n")
        assert "anchors" in problem.message
        assert (problem.line, problem.path) == (1, "a")

    def test_alias_without_anchor_still_refused(self) -> None:
        problem = refuse(b"a: *missing\n")
        assert problem.line == 1

    def test_merge_key(self) -> None:
        problem = refuse(b"base: {a: 1}\nc:\n  <<: {a: 2}\n")
        assert "merge" in problem.message
        assert (problem.line, problem.column, problem.path) == (3, 3, "c")

    def test_anchor_on_mapping(self) -> None:
        problem = refuse(b"a: &x {b: 1}\n")
        assert "anchors" in problem.message

    @pytest.mark.parametrize(
        "text",
        [
            "a: !!python/object/apply:os.system ['echo pwned']",
            "a: !!python/name:os.system",
            "a: !!binary aGVsbG8=",
            "a: !!set {x, y}",
            "a: !!str 1",
            "a: !custom value",
            "a: !!omap [{x: 1}]",
            "a: ! text",
        ],
    )
    def test_every_explicit_tag(self, text: str) -> None:
        problem = refuse(text.encode() + b"\n")
        assert "tags" in problem.message
        assert (problem.line, problem.column, problem.path) == (1, 4, "a")

    def test_duplicate_key_nested_deep(self) -> None:
        problem = refuse(b"a:\n  b:\n    c: 1\n    d: 2\n    c: 3\n")
        assert problem.message == "duplicate key 'c'"
        assert (problem.line, problem.column, problem.path) == (5, 5, "a.b.c")

    def test_duplicate_key_in_list_item(self) -> None:
        problem = refuse(b"a:\n  - {x: 1, x: 2}\n")
        assert problem.path == "a[0].x"

    def test_tab_indentation(self) -> None:
        problem = refuse(b"a:\n\tb: 1\n")
        assert problem.line == 2

    def test_oversize(self) -> None:
        problem = refuse(b"a: " + b"x" * 2000 + b"\n", max_bytes=1000)
        assert "over 1000 bytes" in problem.message

    def test_deep_nesting(self) -> None:
        problem = refuse(b"a: " + b"[" * 50 + b"]" * 50 + b"\n", max_depth=10)
        assert "nesting deeper than 10" in problem.message

    def test_deep_block_nesting_names_the_path(self) -> None:
        lines = [("  " * depth) + f"k{depth}:" for depth in range(6)]
        problem = refuse(("\n".join(lines) + " 1\n").encode(), max_depth=3)
        assert problem.path == "k0.k1.k2"

    def test_too_many_nodes(self) -> None:
        problem = refuse(b"a: [" + b",".join([b"1"] * 500) + b"]\n", max_nodes=100)
        assert "more than 100 YAML nodes" in problem.message

    def test_second_document(self) -> None:
        problem = refuse(b"a: 1\n---\nb: 2\n")
        assert (problem.line, problem.message) == (2, "more than one YAML document")

    @pytest.mark.parametrize("text", ["1: a", "true: a", "~: a", "1.5: a", "? [a]\n: 1"])
    def test_non_string_keys(self, text: str) -> None:
        problem = refuse(text.encode() + b"\n")
        assert "key" in problem.message

    @pytest.mark.parametrize("word", ["yes", "no", "on", "off", "Yes", "OFF", "y", "n"])
    def test_yaml_11_booleans(self, word: str) -> None:
        if word in ("y", "n"):
            # PyYAML resolves y/n as strings; they are accepted as text, not as booleans.
            assert load_strict_yaml(f"a: {word}\n".encode(), "test.yml").value == {"a": word}
            return
        problem = refuse(f"a: {word}\n".encode())
        assert "YAML 1.1 boolean" in problem.message

    @pytest.mark.parametrize(
        "value",
        [
            "2001-12-14",
            "2001-12-14t21:59:43.10-05:00",
            "0755",
            "0x1F",
            "1_000",
            "1:20",
            ".inf",
            ".nan",
            "-.inf",
        ],
    )
    def test_non_json_scalars(self, value: str) -> None:
        problem = refuse(f"a: {value}\n".encode())
        assert "quote it" in problem.message

    @pytest.mark.parametrize("value", ["9" * 5000, "1e999", "-1e400"])
    def test_numbers_beyond_json(self, value: str) -> None:
        problem = refuse(f"a: {value}\n".encode())
        assert problem.path == "a" and "number" in problem.message

    def test_invalid_utf8_names_the_line(self) -> None:
        problem = refuse(b"a: 1\nb: \xff\xfe\n")
        assert (problem.line, problem.message) == (2, "file is not valid UTF-8")

    def test_bom_inside_the_file(self) -> None:
        problem = refuse("a: 1\nb: \ufeffx\n".encode())
        assert problem.line == 2

    def test_syntax_error_is_located(self) -> None:
        problem = refuse(b"a: [1, 2\nb: 3\n")
        assert problem.line is not None and problem.column is not None


# Each case: the text, the line the mistake is on. A key moved left becomes a valid key of the
# outer mapping and the parser stops only at the next line; the owner is sent to the line that
# moved, not the one after it.
INDENTATION_MISTAKES = [
    ("chat:\n  a: 1\nb: 2\n  c: 3\n  d: 4\n", 3),  # moved left out of its block
    ("chat:\n  # a comment\n  a: 1\n b: 2\n  c: 3\n", 4),  # moved left by one
    ("chat:\nprefix: x\n  b: 2\n  c: 3\n", 2),  # the block's first key moved left
    ("chat:\n   prefix: x\n  b: 2\n  c: 3\n", 2),  # the block's first key moved right
    ("  schema: 1\nchat:\n  a: 1\n", 1),  # the file's first line indented
    ("a:\n  b: 1\n    c: 2\n  d: 3\n", 3),  # moved right: the reported line itself
    ("a:\n  b: 1\n c: 2\n  d: 3\n", 3),  # moved left by one, between siblings
    ("t:\n  d: >-\n    text: with a colon\n    more text\n  p: 1\n    q: 2\n  r: 3\n", 6),
    (
        "t:\n  handler: x\n  description: >-\n    prose: here\n  permission: y\n"
        "    parameters:\n      type: object\n",
        6,
    ),
]


@pytest.mark.parametrize(("text", "line"), INDENTATION_MISTAKES)
def test_an_indentation_mistake_is_reported_on_its_own_line(text: str, line: int) -> None:
    with pytest.raises(ConfigLoadError) as caught:
        load_strict_yaml(text.encode(), "config.yml")
    (problem,) = caught.value.problems
    assert problem.line == line, (problem, text)
    assert "indent" in problem.message or "':'" in problem.message, problem.message
