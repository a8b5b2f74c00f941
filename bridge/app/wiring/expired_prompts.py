"""Approval prompts the last run left open: they cannot be answered any more (their tokens lived
in that process's memory), so each is audited as expired and named in the log at start."""

from __future__ import annotations

import logging

from bridge.store.audit import AuditLog
from bridge.store.sessions import OpenPrompt, SessionRecords

log = logging.getLogger(__name__)


def expire_open_prompts(records: SessionRecords, audit: AuditLog) -> list[OpenPrompt]:
    """Audit and log every prompt left open; the command prompts among them, whose targets
    are told once the plugin links (`AppHandler.on_connected`)."""
    told: list[OpenPrompt] = []
    for prompt in records.take_open_prompts():
        fields = prompt.fields
        if fields.get("command") and fields.get("target_uuid"):
            told.append(prompt)
        audit.record(
            "approval.expired",
            {
                "prompt_id": prompt.prompt_id,
                "reason": "the bridge restarted",
                "opened_at": prompt.opened_at.isoformat(),
                "requester": fields.get("requester"),
                "target": fields.get("target"),
                "command": fields.get("command"),
            },
        )
        log.warning(
            "approval prompt expired by the restart: %s was asked to confirm %r for %s",
            fields.get("target", "?"),
            fields.get("command") or fields.get("kind", "?"),
            fields.get("requester", "?"),
        )
    return told
