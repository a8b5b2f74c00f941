"""Canonical command form and anchored, linear-time whitelist decisions."""

from __future__ import annotations

import pytest

from bridge.errors import ToolError
from bridge.policy.whitelist import (
    MAX_COMMAND_CHARS,
    MAX_RULES_PER_LIST,
    InvalidCommand,
    InvalidRule,
    Whitelist,
    canonicalize,
)


class TestCanonicalForm:
    @pytest.mark.parametrize(
        ("command", "canonical"),
        [
            ("/time set day", "time set day"),
            ("time set day", "time set day"),
            ("/TIME Set DAY", "time Set DAY"),
            ("//wand", "/wand"),
            ("Minecraft:Give Steve diamond", "minecraft:give Steve diamond"),
            ("/" + "x" * MAX_COMMAND_CHARS, "x" * MAX_COMMAND_CHARS),
            ("say héllo wörld", "say héllo wörld"),
        ],
    )
    def test_canonical(self, command: str, canonical: str) -> None:
        assert canonicalize(command) == canonical

    @pytest.mark.parametrize(
        ("command", "reason"),
        [
            ("x" * (MAX_COMMAND_CHARS + 1), "longer than"),
            ("/" + "x" * (MAX_COMMAND_CHARS + 1), "longer than"),
            ("say a\nop me", "U+000A"),
            ("say a\rop me", "U+000D"),
            ("say a\u2028op me", "U+2028"),
            ("say a\u2029b", "U+2029"),
            ("say \u200bhi", "U+200B"),
            ("say \u202ehi", "U+202E"),
            ("say \u2066hi", "U+2066"),
            ("say\u00a0hi", "U+00A0"),
            ("say\thi", "U+0009"),
            ("say \x00", "U+0000"),
            ("say §chi", "§"),
            ("say  hi", "repeated spaces"),
            (" say hi", "starts or ends"),
            ("/ say hi", "starts or ends"),
            ("say hi ", "starts or ends"),
            ("", "empty"),
            ("/", "empty"),
        ],
    )
    def test_invalid(self, command: str, reason: str) -> None:
        with pytest.raises(InvalidCommand) as caught:
            canonicalize(command)
        assert reason in caught.value.reason
        assert isinstance(caught.value, ToolError)


class TestDecisions:
    def whitelist(self) -> Whitelist:
        return Whitelist(
            player=["time set (day|night)", "give [A-Za-z0-9_]{3,16} diamond( [1-9])?", "spawn"],
            console=["weather (clear|rain)", "minecraft:give .*"],
        )

    def test_allowed_reports_canonical_and_rule(self) -> None:
        decision = self.whitelist().decide("player", "/TIME set day")
        assert decision.allowed
        assert decision.canonical == "time set day"
        assert decision.rule == "time set (day|night)"

    @pytest.mark.parametrize(
        "command",
        [
            "time set day extra",  # a prefix match is not enough
            "xtime set day",  # nor a suffix match
            "time set noon",
            "give Steve diamond 10",
            "spawnx",
            "minecraft:time set day",  # namespaced roots are distinct commands
        ],
    )
    def test_denied(self, command: str) -> None:
        decision = self.whitelist().decide("player", command)
        assert not decision.allowed
        assert decision.rule is None

    def test_lists_are_per_executor(self) -> None:
        whitelist = self.whitelist()
        assert whitelist.decide("console", "weather clear").allowed
        assert not whitelist.decide("player", "weather clear").allowed
        assert not whitelist.decide("console", "spawn").allowed

    def test_namespaced_rule_matches_only_namespaced_command(self) -> None:
        whitelist = self.whitelist()
        assert whitelist.decide("console", "minecraft:give a b").allowed
        assert not whitelist.decide("console", "give a b").allowed

    def test_first_matching_rule_in_file_order_is_reported(self) -> None:
        whitelist = Whitelist(player=["say .*", "say hello", "say h.*"])
        assert whitelist.decide("player", "say hello").rule == "say .*"
        whitelist = Whitelist(player=["say hello", "say .*"])
        assert whitelist.decide("player", "say hello").rule == "say hello"

    def test_alternation_is_anchored_as_a_whole(self) -> None:
        # Without anchoring the whole pattern, "a|b.*" would let "a" prefix anything.
        whitelist = Whitelist(player=["list|spawn"])
        assert whitelist.decide("player", "list").allowed
        assert not whitelist.decide("player", "list; op me").allowed
        assert not whitelist.decide("player", "spawnop").allowed

    def test_dot_does_not_cross_lines_because_lines_are_refused(self) -> None:
        whitelist = Whitelist(player=["say .*"])
        with pytest.raises(InvalidCommand):
            whitelist.decide("player", "say hi\nop me")

    def test_disabled_whitelist_denies_everything(self) -> None:
        whitelist = Whitelist(enabled=False, player=["spawn"])
        decision = whitelist.decide("player", "spawn")
        assert (decision.allowed, decision.rule, decision.canonical) == (False, None, "spawn")

    def test_unknown_executor(self) -> None:
        with pytest.raises(ToolError, match="unknown executor"):
            self.whitelist().decide("admin", "spawn")  # type: ignore[arg-type]

    def test_empty_lists_deny(self) -> None:
        assert not Whitelist().decide("console", "list").allowed

    def test_catastrophic_backtracking_pattern_answers(self) -> None:
        # (a+)+b on "aaaa...c" takes exponential time in a backtracking engine.
        whitelist = Whitelist(player=["say (a+)+b", "say (a|aa)*c"])
        decision = whitelist.decide("player", "say " + "a" * 250 + "!")
        assert not decision.allowed
        assert whitelist.decide("player", "say " + "a" * 250 + "c").rule == "say (a|aa)*c"

    def test_unicode_rules(self) -> None:
        whitelist = Whitelist(player=["say [a-zé]+"])
        assert whitelist.decide("player", "say café").allowed


class TestRules:
    @pytest.mark.parametrize(
        ("patterns", "message"),
        [
            (["(a"], "not a valid RE2 pattern"),
            (["(a)\\1"], "not a valid RE2 pattern"),
            (["(?=x)y"], "not a valid RE2 pattern"),
            ([""], "1 to 512"),
            (["x" * 513], "1 to 512"),
            (["a\nb"], "control"),
            (["spawn", "spawn"], "twice"),
            ([f"r{i}" for i in range(MAX_RULES_PER_LIST + 1)], "at most 256"),
        ],
    )
    def test_invalid_rules_fail_compilation(self, patterns: list[str], message: str) -> None:
        with pytest.raises(InvalidRule) as caught:
            Whitelist(player=patterns)
        assert message in str(caught.value)

    def test_full_lists_compile(self) -> None:
        patterns = [f"cmd{i} (a|b)+" for i in range(MAX_RULES_PER_LIST)]
        whitelist = Whitelist(player=patterns, console=patterns)
        assert whitelist.decide("console", "cmd255 abab").rule == "cmd255 (a|b)+"
        assert len(whitelist.rules("player")) == MAX_RULES_PER_LIST
