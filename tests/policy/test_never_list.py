"""The never list on resolved identities, and whitelist rules that could reach it."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.control.init import init_config_dir
from bridge.control.never_categories import NeverCategory, effective_categories
from bridge.control.never_rules import never_rule_problems
from bridge.control.plane import load_control_plane
from bridge.control.problems import ConfigLoadError
from bridge.control.whitelist_file import WhitelistFile
from bridge.policy.never_list import CommandIdentity, NeverList

NEVER = NeverList(effective_categories([], {}))


def known(
    label: str, name: str, plugin: str, permission: str | None, *aliases: str
) -> CommandIdentity:
    return CommandIdentity(label, True, name, plugin, aliases, permission)


@pytest.mark.parametrize(
    "identity",
    [
        # an alias the built-in data does not spell: judged as its real name
        known("xs", "sudo", "Essentials", None, "xs"),
        # a plugin's own root whose every command is never: judged by its owner
        known("perms2", "perms2", "LuckPerms", None),
        # a root nobody listed, but its permission node is in a category
        known("zap", "zap", "Moderation", "essentials.ban"),
        known("grp", "grp", "Groups", "groupmanager.manuadd"),
        known("pm2", "pm2", "PlugManX", "plugman.unload"),
    ],
    ids=lambda i: i.label,
)
def test_a_resolved_identity_decides_not_the_spelling(identity: CommandIdentity) -> None:
    spelled = f"{identity.label} Steve"
    assert NEVER.judge(spelled, None).refusal() is None  # the spelling alone says nothing
    judgement = NEVER.judge(spelled, {identity.label: identity})
    assert judgement.refusal() is not None and "never list" in str(judgement.refusal())


def test_a_subcommand_of_a_resolved_root_is_judged() -> None:
    identity = known("c", "cmi", "CMI", "cmi.command", "c")
    assert "run_as_others" in str(NEVER.judge("c sudo Alex op", {"c": identity}).refusal())
    assert NEVER.judge("c balance", {"c": identity}).refusal() is None


def test_unknown_labels_and_alias_scripts_are_refused_even_with_the_opt_out() -> None:
    unknown = CommandIdentity("nosuch", False)
    judgement = NEVER.judge("nosuch x", {"nosuch": unknown})
    assert "has no command 'nosuch'" in str(judgement.refusal(allow_never=True))
    script = CommandIdentity("heal-all", True, "heal-all", None, (), None, script=True)
    judgement = NEVER.judge("heal-all", {"heal-all": script})
    assert "commands.yml" in str(judgement.refusal(allow_never=True))


def test_a_carried_label_is_resolved_too() -> None:
    resolved = {
        "execute": known("execute", "execute", "minecraft", "minecraft.command.execute"),
        "xs": known("xs", "sudo", "Essentials", "essentials.sudo", "xs"),
    }
    judgement = NEVER.judge("execute run xs Alex op Steve", resolved)
    assert judgement.commands == ("execute run xs Alex op Steve", "xs Alex op Steve")
    assert "run_as_others" in str(judgement.refusal())


def test_the_owner_extends_categories_and_names() -> None:
    extra = {"griefing": NeverCategory(commands=["tnt"], plugins=["WorldEdit"])}
    never = NeverList(effective_categories(["nuke"], extra))
    assert "owner" in str(never.judge("nuke all", None).refusal())
    assert "griefing" in str(never.judge("tnt", None).refusal())
    worldedit = known("/set", "/set", "WorldEdit", "worldedit.region.set")
    assert "WorldEdit owns it" in str(never.judge("/set stone", {"/set": worldedit}).refusal())
    # the built-in categories stay whatever the owner adds
    assert never.judge("op Steve", None).refusal() is not None


def _file(**lists: object) -> WhitelistFile:
    return WhitelistFile.model_validate({"schema": 1, **lists})


@pytest.mark.parametrize(
    "rule", [".*", "(op|give) .*", "o[p] .*", "minecraft:o[p] Steve", "[a-z]+ .*",
             "execute as @a run .*", "cmi .*", "(?i)OP x", "e?sudo .*"]
)  # fmt: skip
def test_a_rule_that_could_reach_a_never_listed_command_is_an_error(rule: str) -> None:
    [problem] = never_rule_problems(_file(console=["time set day", rule]))
    assert problem.path == ("console", 1) and not problem.warning
    assert "allow_never" in problem.message


@pytest.mark.parametrize(
    "rule", ["time set (day|night)", "give [A-Za-z0-9_]{3,16} minecraft:bread [0-9]{1,2}",
             "say [a-z ]{1,40}", "spawn", "cmi (balance|warp)( .*)?", "opx .*"]
)  # fmt: skip
def test_narrow_rules_pass(rule: str) -> None:
    assert never_rule_problems(_file(player=[rule], console_confirm=[rule])) == []


def test_the_opt_out_is_a_warning_every_time(tmp_path: Path) -> None:
    init_config_dir(tmp_path)
    (tmp_path / "whitelist.yml").write_text(
        'schema: 1\nconsole_confirm:\n  - {rule: "ban [A-Za-z0-9_]{3,16}", allow_never: true}\n',
        encoding="utf-8",
    )
    for version in (1, 2):
        plane = load_control_plane(tmp_path, version=version)
        [warning] = [w for w in plane.warnings if w.file == "whitelist.yml"]
        assert warning.line == 3 and "allow_never" in warning.message


def test_without_the_opt_out_the_load_fails_naming_file_line_and_rule(tmp_path: Path) -> None:
    init_config_dir(tmp_path)
    (tmp_path / "whitelist.yml").write_text(
        'schema: 1\nplayer:\n  - "spawn"\n  - "ba[n] .*"\n', encoding="utf-8"
    )
    with pytest.raises(ConfigLoadError) as caught:
        load_control_plane(tmp_path, version=1)
    [problem] = [p for p in caught.value.problems if p.file == "whitelist.yml"]
    assert problem.line == 4 and problem.path == "player[1]" and "ba[n] .*" in problem.message


def test_a_function_that_opts_out_is_a_warning_every_time(tmp_path: Path) -> None:
    init_config_dir(tmp_path)
    text = (tmp_path / "functions.yml").read_text(encoding="utf-8")
    entry = (
        "functions:\n  - name: ban-griefer\n    description: bans\n    enabled: true\n"
        "    capabilities: [command.dispatch.console]\n    allow_never: true\n"
        "    parameters: {type: object}\n"
        "    on_call: 'async function onCall(ctx, api) { return {status: \"ok\", output: {}}; }'\n"
    )
    head = text.split("functions:", 1)[0]
    (tmp_path / "functions.yml").write_text(head + entry, encoding="utf-8")
    for version in (1, 2):
        plane = load_control_plane(tmp_path, version=version)
        [warning] = [w for w in plane.warnings if w.file == "functions.yml"]
        assert "ban-griefer" in warning.message and warning.path == "functions[0].allow_never"


def test_a_harmless_command_sharing_no_alias_with_the_list_passes() -> None:
    # EssentialsX's balance has the aliases money and emoney: checking a balance stays allowed,
    # while the admin forms of /money are pairs of the economy category.
    balance = known("bal", "balance", "Essentials", None, "bal", "ebal", "money", "emoney")
    assert NEVER.judge("bal Steve", {"bal": balance}).refusal() is None
    assert "economy" in str(NEVER.judge("money give Steve 5", {"money": balance}).refusal())
    jail = known("tjail", "togglejail", "Essentials", None, "jail", "ejail", "tjail", "unjail")
    assert "bans_and_kicks" in str(NEVER.judge("tjail Griefer", {"tjail": jail}).refusal())


@pytest.mark.parametrize(
    "command",
    [
        "mineclaw memory list Alice",
        "mineclaw:mineclaw memory forget all Alice",
        "ai delete 1",
        "execute run mineclaw memory list Alice",
    ],
)
def test_the_bridges_own_commands_are_never_run_for_the_model(command: str) -> None:
    # A whitelist rule or a Function's console capability dispatched `mineclaw memory list
    # Alice` as the console: the bridge's commands are a built-in category.
    refusal = NEVER.judge(command, None).refusal()
    assert refusal is not None and "bridge" in str(refusal)
    resolved = {"mc": known("mc", "mc", "Mineclaw", "mineclaw.command.memory")}
    assert NEVER.judge("mc memory list Alice", resolved).refusal() is not None
