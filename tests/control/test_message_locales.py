"""The shipped message sets (``locale`` in ``config.yml``): the same keys and placeholders in
every set, the same restricted MiniMessage rules, and ``message.yml`` over the chosen set."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from bridge.control import ConfigLoadError, load_control_plane
from bridge.control.message_locales import (
    LOCALES,
    LocaleSetError,
    locale_set,
    localised,
    parse_locale_set,
)
from bridge.control.messages_file import PLACEHOLDERS, MessagesFile
from bridge.control.template_rules import tags


def _lines(messages: MessagesFile) -> dict[str, str]:
    dumped = messages.model_dump(by_alias=True)
    return {
        f"{section}.{key}": value
        for section, fields in dumped.items()
        if isinstance(fields, dict)
        for key, value in fields.items()
    }


def _placeholders(template: str) -> set[str]:
    """The placeholders a template uses (its tags that are no style tag)."""
    return {tag.body for tag in tags(template) if not tag.closing} & {
        name for allowed, _ in PLACEHOLDERS.values() for name in allowed
    }


ZH_CN = resources.files("bridge.control.locales").joinpath("zh_CN.yml").read_bytes()


def test_every_set_has_exactly_the_keys_and_placeholders_of_english() -> None:
    english = _lines(locale_set("en"))
    assert set(english) == set(PLACEHOLDERS)
    for locale in LOCALES:
        lines = _lines(locale_set(locale))
        assert set(lines) == set(english), locale
        for key, template in lines.items():
            assert _placeholders(template) == _placeholders(english[key]), (locale, key)


def test_the_chinese_set_is_chinese() -> None:
    chinese = locale_set("zh_CN")
    assert chinese.gates.busy != locale_set("en").gates.busy
    assert "助手" in chinese.gates.busy


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        # The same restricted MiniMessage as message.yml: no click, hover or other action tag.
        ("<red>你没有使用助手的权限。", "<click:run_command:/op>你没有权限", "not a style tag"),
        ("<gray>助手正在冷却", "<hover:show_text:'x'>助手正在冷却", "not a style tag"),
        # A required placeholder stays required; an unknown one is refused.
        ("请等待 <seconds> 秒后再提问。", "请等待后再提问。", "must contain <seconds>"),
        ("<gray>（助手尚未配置）", "<gray><model>", "not a style tag"),
        ("<gray>助手当前离线。", "§c助手当前离线。", "§"),
    ],
)
def test_a_set_is_checked_with_the_rules_of_message_yml(old: str, new: str, problem: str) -> None:
    text = ZH_CN.decode()
    assert old in text
    with pytest.raises(LocaleSetError, match=problem):
        parse_locale_set(text.replace(old, new, 1).encode(), "zh_CN.yml")


def test_a_set_that_lacks_a_line_is_refused() -> None:
    text = ZH_CN.decode().replace('  busy: "<gray>助手正在处理另一个请求，请稍后再试。"\n', "")
    with pytest.raises(LocaleSetError, match="lacks gates.busy"):
        parse_locale_set(text.encode(), "zh_CN.yml")


def test_message_yml_lines_win_except_the_english_defaults() -> None:
    english = locale_set("en")
    written = MessagesFile.model_validate(
        {
            "schema": 1,
            "gates": {"busy": "<red>Wait!", "no_permission": english.gates.no_permission},
        }
    )
    mixed = localised(written, "zh_CN")
    chinese = locale_set("zh_CN")
    assert mixed.gates.busy == "<red>Wait!"  # the owner's own line
    assert mixed.gates.no_permission == chinese.gates.no_permission  # left as init wrote it
    assert mixed.errors.offline == chinese.errors.offline  # not written at all
    assert localised(written, "en") is written


def test_a_folder_switched_to_zh_cn_shows_chinese_lines(config_dir: Path) -> None:
    config = config_dir / "config.yml"
    config.write_text(config.read_text().replace("locale: en", "locale: zh_CN"))
    messages = config_dir / "message.yml"
    text = messages.read_text().replace(
        '"<gray>The assistant is offline."', '"<gray>Offline, sorry."'
    )
    messages.write_text(text)
    plane = load_control_plane(config_dir)
    assert plane.messages.gates.busy == locale_set("zh_CN").gates.busy
    assert plane.messages.help.model == locale_set("zh_CN").help.model
    assert plane.messages.errors.offline == "<gray>Offline, sorry."


def test_an_unknown_locale_names_the_field(config_dir: Path) -> None:
    config = config_dir / "config.yml"
    config.write_text(config.read_text().replace("locale: en", "locale: fr"))
    with pytest.raises(ConfigLoadError) as caught:
        load_control_plane(config_dir)
    [problem] = [p for p in caught.value.problems if not p.warning]
    assert (problem.file, problem.path) == ("config.yml", "locale")
    assert "zh_CN" in problem.message and problem.line is not None
