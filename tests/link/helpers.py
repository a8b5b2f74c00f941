"""Frames a fake plugin sends, for the link tests."""

from __future__ import annotations

import json
from typing import Any

from bridge.link.auth import compute_mac

TOKEN = "k" * 43
INSTANCE_ID = "3f1c2a4e-8b7d-4c6a-9e2f-1a2b3c4d5e6f"
STEVE = {"uuid": "0b9e4d1a-2c3f-4e5d-8a7b-6c5d4e3f2a1b", "name": "Steve"}


def frame(type: str, data: dict[str, Any], *, id: str = "p-1", re: str | None = None) -> str:
    envelope: dict[str, Any] = {"v": 1, "id": id, "type": type, "data": data}
    if re is not None:
        envelope["re"] = re
    return json.dumps(envelope)


def hello(
    nonce: str,
    *,
    token: str = TOKEN,
    major: int = 1,
    id: str = "p-hello",
    instance_id: str = INSTANCE_ID,
    server_id: str | None = None,
    mac_server_id: str | None = None,
) -> str:
    """``mac_server_id`` stands for the id the MAC was made with (default: ``server_id``)."""
    signed = server_id if mac_server_id is None else mac_server_id
    data: dict[str, Any] = {
        "protocol": {"major": major, "minor": 0},
        "nonce": nonce,
        "mac": compute_mac(token, nonce, instance_id, signed),
        "instance_id": instance_id,
        "plugin_version": "0.1.0",
        "minecraft_version": "1.21.10",
        "platform": "testkit",
        "features": [],
    }
    if server_id is not None:
        data["server_id"] = server_id
    return frame("hello", data, id=id)


def chat(text: str = "@ai hi", *, id: str = "p-2") -> str:
    data = {"player": STEVE, "granted": ["mineclaw.command.chat"], "text": text}
    return frame("chat", data, id=id)


def parse(text: str) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads(text)
    return parsed
