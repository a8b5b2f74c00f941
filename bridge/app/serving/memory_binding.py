"""Memory wired to the configuration in force: ``config.yml``'s ``memory`` section turned into
the tools' settings and the recall port a turn's snapshot carries (`bridge.memory`)."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from bridge.control import ControlPlane
from bridge.control.memory_config import MemoryConfig
from bridge.control.memory_files import MemoryNote
from bridge.errors import StoreError
from bridge.memory.conversations import IndexedArchive
from bridge.memory.recall import MemoryRecall, QuestionVectors, RecallFloor, RecallSettings
from bridge.memory.records import SERVER_OWNER, Memory
from bridge.memory.store import MemoryStore
from bridge.redaction import Redactor
from bridge.tools.memory_tools import MemoryTools, MemoryToolSettings
from bridge.tools.registry import HandlerFn
from bridge.turns.ports import ArchiveWriter, PlayerRef

log = logging.getLogger(__name__)


def tool_settings(config: MemoryConfig) -> MemoryToolSettings:
    return MemoryToolSettings(
        max_chars=config.max_chars,
        max_per_player=config.max_per_player,
        recall_limit=max(1, config.top_k),
        floor=floor_of(config),
    )


def floor_of(config: MemoryConfig) -> RecallFloor:
    """``memory.min_similarity`` and ``memory.min_overlap`` in force."""
    return RecallFloor(min_similarity=config.min_similarity, min_overlap=config.min_overlap)


def memory_tools_for(store: MemoryStore, plane: Callable[[], ControlPlane]) -> MemoryTools:
    """The tools over ``store``, reading the plane in force at every call."""
    return MemoryTools(
        store,
        settings=lambda: tool_settings(plane().config.memory),
        redactor=lambda: plane().redactor,
    )


def memory_handlers(plane: ControlPlane, tools: MemoryTools | None) -> dict[str, HandlerFn]:
    """``remember`` and ``recall`` while ``memory.enabled`` (otherwise they are not built and
    offered to nobody)."""
    if tools is None or not plane.config.memory.enabled:
        return {}
    return tools.handlers()


def recall_for(
    store: MemoryStore | None,
    config: MemoryConfig,
    redactor: Redactor,
    *,
    guest: bool,
    vectors: QuestionVectors | None = None,
) -> MemoryRecall | None:
    """The recall port of a snapshot (None: memory off, or nothing may be recalled)."""
    if store is None or not config.enabled or config.top_k == 0:
        return None
    settings = RecallSettings(
        top_k=config.top_k,
        public_top_k=config.public_top_k,
        max_tokens=config.recall_max_tokens,
        floor=floor_of(config),
    )
    return MemoryRecall(store, settings, redactor=redactor, guest=guest, vectors=vectors)


def workspace_memories(notes: Sequence[MemoryNote]) -> list[Memory]:
    """The owner's notes as server memories. The id is a digest of the file and the text, so
    a note keeps its id across reloads while it is unchanged (and the same note twice in one
    file is one memory)."""
    memories: dict[str, Memory] = {}
    now = datetime.now(UTC)
    for note in notes:
        digest = hashlib.sha256(f"{note.file}\n{note.text}".encode()).hexdigest()
        memory_id = "m" + digest[:8]
        memories.setdefault(
            memory_id,
            Memory(
                memory_id=memory_id,
                scope="server",
                owner_uuid=SERVER_OWNER,
                owner_name="",
                text=note.text,
                source="workspace",
                created_at=now,
                origin=f"{note.file}:{note.line}",
            ),
        )
    return list(memories.values())


class WorkspaceNotes:
    """The owner's memory notes (``memory/*.md``) kept as the store's workspace memories:
    replaced when the plane in force brings other notes (at start and after a reload;
    blocking, as the reload that calls it). Notes that could not be stored are tried again
    at the next sync."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store
        self._notes: object = None

    def sync(self, notes: Sequence[MemoryNote]) -> None:
        if notes == self._notes:
            return
        try:
            self._store.replace_source("workspace", workspace_memories(notes))
        except StoreError as exc:
            log.error("workspace memories not stored: %s", exc)
            return
        self._notes = notes


def indexed_archives(
    store: MemoryStore, plane: Callable[[], ControlPlane]
) -> Callable[[ArchiveWriter, str, PlayerRef | None], ArchiveWriter]:
    """What makes a lane's archive also index its turns for recall (`bridge.memory`), each
    entry with its lane (a conversation's entries go with it), while ``memory.enabled``."""

    def indexed(archive: ArchiveWriter, lane_id: str, owner: PlayerRef | None) -> ArchiveWriter:
        return IndexedArchive(
            archive,
            store,
            None if owner is None else owner.uuid,
            lane_id=lane_id,
            enabled=lambda: plane().config.memory.enabled,
        )

    return indexed
