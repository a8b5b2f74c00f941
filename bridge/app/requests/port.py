"""What a one-off model request may use of the running bridge, and nothing more.

A listen decision, a conversation title and the budget bookkeeping they share read the plane
in force, ask for a model's stream (the client factory), hold and settle the server's budget,
count in the metrics, write the audit log, and look at the listen switch and the players'
conversations. `bridge.app.wiring.runtime.Runtime` implements this port; the requests never
import the runtime (it builds them), so no import runs back up into the process wiring.
"""

from __future__ import annotations

from typing import Protocol

from bridge.app.players.conversation_state import ConversationState
from bridge.app.serving.served import ModelStream
from bridge.control import ControlPlane
from bridge.metrics import BridgeMetrics
from bridge.policy.budgets import Budgets
from bridge.providers.client import ProviderClient
from bridge.providers.settings import ModelSettings
from bridge.store.audit import AuditLog
from bridge.turns.listen import ListenMode


class RequestPort(Protocol):
    @property
    def plane(self) -> ControlPlane:
        """The control plane in force (settings, redaction)."""
        ...

    def model_stream(self, ref: str) -> ModelStream:
        """A one-off stream of model ``ref``; ``NotConfiguredError`` when it cannot be called."""
        ...

    def one_off_route(self, ref: str) -> tuple[ProviderClient, ModelSettings]:
        """Model ``ref``'s provider client and settings, for a request made on another loop
        (listen decisions); ``NotConfiguredError`` when it cannot be called."""
        ...

    def model_ref(self) -> str:
        """The model in force (``/mineclaw model`` or the default)."""
        ...

    @property
    def budgets(self) -> Budgets | None:
        """The token budgets (None: usage is not counted)."""
        ...

    @property
    def metrics(self) -> BridgeMetrics: ...

    @property
    def audit(self) -> AuditLog: ...

    @property
    def listen(self) -> ListenMode:
        """The listen switch, the players who opted out and what was overheard."""
        ...

    @property
    def conversations(self) -> ConversationState | None:
        """The players' private conversations (None until the app handler sets them)."""
        ...
