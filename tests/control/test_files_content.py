"""message.yml templates, tools.yml schemas and the workspace skills."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from bridge.control import ConfigLoadError, load_control_plane
from bridge.control.messages_file import PLACEHOLDERS, MessagesFile
from bridge.control.tools_file import ToolsFile
from bridge.control.workspace_files import load_workspace, parse_skill


class TestMessages:
    def test_every_default_template_passes_its_own_rules(self) -> None:
        defaults = MessagesFile.model_validate({"schema": 1}).model_dump(by_alias=True)
        explicit = MessagesFile.model_validate(defaults)  # validated as if an owner wrote them
        checked = {
            f"{section}.{name}"
            for section, fields in explicit.model_dump().items()
            if isinstance(fields, dict)
            for name in fields
        }
        assert checked == set(PLACEHOLDERS)

    @pytest.mark.parametrize(
        ("section", "field", "template", "message"),
        [
            ("reply", "layout", "<click:run_command:/op me>hi <message>", "not a style tag"),
            ("reply", "layout", "<hover:show_text:x><message>", "not a style tag"),
            ("reply", "layout", "<insert:x><message>", "not a style tag"),
            ("reply", "layout", "<red>no message here", "must contain <message>"),
            ("approval", "prompt", "<command> <accept>", "must contain <deny>"),
            ("gates", "busy", "wait <seconds>", "not a style tag or a placeholder"),
            ("gates", "busy", "line\nbreak", "control"),
            ("gates", "busy", "§cred", "§"),
            ("gates", "busy", "<red:x>busy", "takes no argument"),
            ("gates", "busy", "x" * 1100, "longer than"),
        ],
    )
    def test_refused(self, section: str, field: str, template: str, message: str) -> None:
        with pytest.raises(ValidationError) as caught:
            MessagesFile.model_validate({"schema": 1, section: {field: template}})
        assert message in str(caught.value)
        assert caught.value.errors()[0]["loc"] == (section, field)

    def test_style_tags_and_placeholders(self) -> None:
        data: dict[str, Any] = {
            "schema": 1,
            "approval": {
                "prompt": "<gradient:red:#00ff00><b><command></b></gradient> <accept><deny>"
            },
        }
        assert "<gradient" in MessagesFile.model_validate(data).approval.prompt

    def test_unknown_key(self) -> None:
        with pytest.raises(ValidationError, match="reply.colour"):
            MessagesFile.model_validate({"schema": 1, "reply": {"colour": "x"}})


class TestTools:
    def tool(self, **overrides: Any) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "handler": "read",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        }
        spec.update(overrides)
        return {"schema": 1, "tools": {"read": spec}}

    @pytest.mark.parametrize(
        ("overrides", "message"),
        [
            ({"handler": "shell"}, "tools.read.handler"),
            ({"parameters": {"type": "array"}}, '"type": "object"'),
            (
                {"parameters": {"type": "object", "properties": {"a": {"type": 5}}}},
                "not a valid JSON Schema",
            ),
            ({"permission": "Not A Node"}, "permission node"),
            ({"description": ""}, "tools.read.description"),
        ],
    )
    def test_refused(self, overrides: dict[str, Any], message: str) -> None:
        with pytest.raises(ValidationError) as caught:
            ToolsFile.model_validate(self.tool(**overrides))
        text = str(caught.value)
        assert message in text or message in " ".join(
            ".".join(map(str, e["loc"])) for e in caught.value.errors()
        )

    def test_bad_tool_name(self) -> None:
        data = self.tool()
        data["tools"] = {"Read-File": data["tools"]["read"]}
        with pytest.raises(ValidationError, match="tool name"):
            ToolsFile.model_validate(data)

    def test_enabled_filter(self) -> None:
        data = self.tool(enabled=False)
        assert ToolsFile.model_validate(data).enabled() == {}


SKILL = "---\nid: demo\nname: Demo\ndescription: A demo.\ntriggers: [a, b]\n---\nBody text.\n"


class TestSkills:
    def test_parse(self) -> None:
        skill = parse_skill(SKILL, "workspace/skills/demo.md")
        assert (skill.header.id, skill.header.triggers, skill.body) == (
            "demo",
            ["a", "b"],
            "Body text.\n",
        )

    @pytest.mark.parametrize(
        ("text", "line", "message"),
        [
            ("no front matter\n", 1, "front matter"),
            ("---\nid: Demo!\nname: x\ndescription: y\n---\n", 2, "pattern"),
            ("---\nid: demo\nname: x\n---\n", 2, "required field is missing"),
            ("---\nid: demo\nname: x\ndescription: y\nextra: 1\n---\n", 5, "unknown field"),
            ("---\nid: &a demo\nname: x\ndescription: y\n---\n", 2, "anchors"),
        ],
    )
    def test_refused(self, text: str, line: int, message: str) -> None:
        with pytest.raises(ConfigLoadError) as caught:
            parse_skill(text, "workspace/skills/x.md")
        problem = caught.value.problems[0]
        assert message in problem.message
        assert problem.file == "workspace/skills/x.md"
        assert problem.line == line

    def test_duplicate_ids_and_links(self, config_dir: Path, tmp_path: Path) -> None:
        skills = config_dir / "workspace" / "skills"
        (skills / "a.md").write_text(SKILL)
        (skills / "b.md").write_text(SKILL)
        outside = tmp_path / "outside.md"
        outside.write_text(SKILL.replace("demo", "other"))
        (skills / "c.md").symlink_to(outside)
        _, loaded, problems = load_workspace(config_dir)
        assert "demo" in {s.header.id for s in loaded}
        assert "other" not in {s.header.id for s in loaded}
        messages = {p.file: p.message for p in problems}
        assert "also used by workspace/skills/a.md" in messages["workspace/skills/b.md"]
        assert "symbolic link" in messages["workspace/skills/c.md"]
        with pytest.raises(ConfigLoadError):
            load_control_plane(config_dir, environ={})

    def test_linked_workspace_folder_refused(self, config_dir: Path, tmp_path: Path) -> None:
        (config_dir / "workspace").rename(tmp_path / "ws")
        (config_dir / "workspace").symlink_to(tmp_path / "ws")
        agents, skills, problems = load_workspace(config_dir)
        assert (agents, skills) == ("", ())
        assert [p.file for p in problems] == ["workspace"]
