"""The application's LinkHandler: chat verdicts, ``/mineclaw`` commands and the link state.

Listen mode is bound to the server instance id of each hello: a new id (server or plugin
restart) switches it off, a reconnect of the same instance keeps it. The link server captures
``link_state()`` before the hello arrives, so the state is sent again once the instance is known
and after every change of listen mode, the prefix or the wake pattern.
"""

from __future__ import annotations

import logging
from typing import Any

from bridge.app.chat.chat import ChatPath
from bridge.app.chat.operator_notices import OperatorNotices
from bridge.app.chat.reported_nodes import REPORT_NODES_FEATURE, reported_nodes
from bridge.app.commands.router import CommandRouter
from bridge.app.lanes.asks import ASKS_FEATURE
from bridge.app.lanes.output import LinkTurnOutput
from bridge.app.players.conversation_state import ConversationState
from bridge.app.players.listen_optouts import ListenOptOuts
from bridge.app.players.persona_choices import PersonaChoices
from bridge.app.requests.background import BackgroundTasks
from bridge.app.wiring.runtime import Runtime
from bridge.errors import LinkError, MineclawError
from bridge.link.handler import CURRENT_LINK, Link
from bridge.link.messages import (
    ChatRequest,
    ChatVerdict,
    CommandReply,
    CommandRequest,
    Hello,
    LinkState,
    OutputChat,
    PlayerRef,
)
from bridge.tools.ask_player import MAX_QUESTION_CHARS
from bridge.tools.assembly import redactor_for
from bridge.tools.link_tools import LinkTools
from bridge.tools.registry import CallContext
from bridge.turns.listen import ListenCarry, carry_limits

BUDGETS_FEATURE = "budgets"
"""The feature of a plugin that reports the budget tier nodes ``link.state`` names."""
log = logging.getLogger(__name__)


class AppHandler:
    def __init__(
        self,
        runtime: Runtime,
        *,
        optouts: ListenOptOuts | None = None,
        personas: PersonaChoices | None = None,
        conversations: ConversationState | None = None,
    ) -> None:
        self.runtime = runtime
        self.output = LinkTurnOutput(runtime)
        self.chat = ChatPath(runtime, self.output)
        # Who opted out of listen mode, the players' persona choices and their private
        # conversations are kept in the store (`bridge.store.player_state`), so every bridge of
        # a network serves a player alike; the servers of one bridge share them (those of the
        # default server's handler).
        if optouts is None:
            optouts = ListenOptOuts(runtime.players)
        self.optouts = optouts
        if personas is None:
            personas = PersonaChoices(runtime.players)
        self.personas = personas
        runtime.persona_choices = personas
        if conversations is None:
            conversations = ConversationState(runtime.players)
        self.conversations = conversations
        self._reading = BackgroundTasks("players' state read")
        runtime.conversations = conversations
        runtime.lanes.private_lane_id = conversations.lane_id
        runtime.listen.share_ignored(optouts.players)
        # The public lane's turns carry what listen mode overheard since the last one.
        runtime.lanes.public.engine.overheard = ListenCarry(
            runtime.listen.overheard, lambda: carry_limits(runtime.plane.config.listen)
        )
        self.commands = CommandRouter(
            runtime, self.output, on_state_changed=self.send_link_state, optouts=optouts
        )
        # Snapshot tools, run_command and approvals (bridge.tools.link_tools).
        self.link_tools = LinkTools(
            served=lambda: runtime.served, audit=runtime.audit, broker=runtime.approval_broker
        )
        self.commands.approval_handler = self.link_tools.approval_handler
        runtime.plugin = self.link_tools.plugin
        runtime.add_tool_handlers(self.link_tools.handlers())
        # Function approvals share the link tools' prompts and /mineclaw approve|deny.
        runtime.functions.attach(self.link_tools.plugin, self.link_tools.broker)
        # Operators online hear the provider's own error when turns fail at the provider.
        self.notices = OperatorNotices(
            runtime,
            send=self.output.send_soon,
            audit=runtime.audit,
            redact=lambda text: redactor_for(runtime.plane).redact_text(text),
        )
        runtime.engine.provider_failure_listener = self.notices.notify
        runtime.functions.suspension_listener = self.notices.function_suspended
        # What remember kept is shown to the asker; a server memory from a private
        # conversation is kept only once the asker said yes to it.
        if runtime.memory_tools is not None:
            runtime.memory_tools.notify = self._remembered
            runtime.memory_tools.consent = self._consented

    async def _remembered(self, context: CallContext, text: str) -> None:
        line = self.runtime.text("memory.remembered", {"player": context.player_name}, text=text)
        try:
            await self.output.tell(context.player_uuid, line)
        except MineclawError as exc:
            log.info("remembered line not shown: %s", exc)

    async def _consented(self, context: CallContext, text: str) -> bool:
        template = self.runtime.plane.messages.memory.consent
        question = template.replace("<text>", text)[:MAX_QUESTION_CHARS]
        answer = await self.link_tools.ask.run({"question": question}, context)
        return answer.get("answer") == "yes"

    def link_state(self) -> LinkState:
        runtime = self.runtime
        rules = runtime.wake_rules()
        prefix, every_message = rules.public_prefix, rules.needs_every_message
        forward = runtime.listen.forward_mode(wake_pattern_set=every_message)
        plugin = runtime.plugin
        features = plugin.features if plugin is not None and plugin.linked else frozenset()
        # The plugin reports a tier's node, or another node the bridge decides by, only once
        # it is named here (and again after a reload that changes them). Each field goes only
        # to a plugin announcing it: an older plugin refuses fields it does not know.
        named: dict[str, Any] = {}
        if BUDGETS_FEATURE in features:
            named["budget_tiers"] = list(runtime.plane.config.budgets.tiers)
        if REPORT_NODES_FEATURE in features:
            named["report_nodes"] = reported_nodes(runtime.plane)
        if ASKS_FEATURE in features:  # its questions carry ids (bridge.app.lanes.asks)
            named["asks"] = True
        return LinkState(forward=forward, public_prefix=prefix, **named)

    async def send_link_state(self) -> None:
        link = self.runtime.link
        if link is None:
            return
        try:
            await link.send_event("link.state", self.link_state())
        except LinkError as exc:
            log.info("link.state not sent: %s", exc)

    async def on_connected(self, link: Link, hello: Hello) -> None:
        self.runtime.link = link
        self.link_tools.connected(link, hello)
        if self.runtime.listen.bind_instance(hello.instance_id):
            log.info("listen mode off: new server instance %s", hello.instance_id)
            self.runtime.listen_decisions.listen_off()
        self.runtime.audit.record(
            "link.up", {"instance_id": hello.instance_id, "platform": hello.platform}
        )
        await self.send_link_state()
        self._tell_expired_prompts()
        self.runtime.poke_embedder()
        # Another bridge may have served these players meanwhile (this server was taken over,
        # or relinked after a failover): their state is read from the store again.
        self.conversations.forget()
        self._reading.start(self.optouts.reload())
        self._reading.start(self.personas.reload())

    async def players_read(self) -> None:
        """Wait until the players' state asked for at the last link is read (tests)."""
        await self._reading.settled()

    def _tell_expired_prompts(self) -> None:
        """Tell each player a prompt was waiting for when the bridge last stopped that it has
        expired (once; a player who is not online now is not told). Sent without waiting for
        the answers: the link cannot answer while its connect callback runs."""
        runtime = self.runtime
        expired, runtime.expired_prompts = runtime.expired_prompts, []
        chats = []
        for prompt in expired:
            fields = prompt.fields
            values = {key: fields.get(key, "") for key in ("requester", "target", "command")}
            line = runtime.text("approval.expired", values)
            chats.append(OutputChat(target="player", player=fields["target_uuid"], text=line))
        for chat in chats:  # one each: a player gone offline does not hold up the others
            try:
                self.output.send_soon(chat)
            except MineclawError as exc:
                log.info("expired prompts not told: %s", exc)
                return

    async def on_disconnected(self) -> None:
        self.runtime.link = None
        self.link_tools.disconnected()
        self.notices.link_down()
        self.runtime.audit.record("link.down", {})

    async def on_chat(self, request: ChatRequest) -> ChatVerdict:
        self.notices.seen(request.player, request.granted)
        self.runtime.listen_decisions.seen(request.player.name)
        # The link this request came on (the runtime may have let go of it already).
        link = CURRENT_LINK.get() or self.runtime.link
        verdict = await self.chat.on_chat(request)
        if request.ask is not None:  # a question that started no turn is ended first
            await self.runtime.lanes.end_not_taken(request.ask, link)
        return verdict

    async def on_command(self, request: CommandRequest) -> CommandReply:
        sender = request.sender
        if sender.player is not None:
            self.notices.seen(sender.player, sender.granted)
        # The link this request came on (the runtime may have let go of it already).
        link = CURRENT_LINK.get() or self.runtime.link
        reply = await self.commands.on_command(request)
        # A question that started no turn is ended first. The plugin keeps an /ai question
        # whatever the reply says until it is ended, so one whose end did not reach it is
        # answered with no line: it goes to the bridge the plugin links to next, which alone
        # tells its asker (a chat verdict needs no such care: one that does not accept ends
        # its question in the plugin itself).
        lanes = self.runtime.lanes
        if request.ask is not None and not await lanes.end_not_taken(request.ask, link):
            log.info("question %s not ended here: its reply's lines withheld", request.ask)
            return CommandReply(lines=[])
        return reply

    async def on_player_join(self, player: PlayerRef) -> None:
        # Who is online: a question naming another player is theirs, not the assistant's.
        self.runtime.listen_decisions.seen(player.name)

    async def on_player_quit(self, player: PlayerRef) -> None:
        self.runtime.listen_decisions.left(player.name)
        self.link_tools.player_quit(player)
        self.runtime.lanes.player_quit(player.uuid)
        self.notices.quit(player)

    async def on_chat_expired(self, request_id: str) -> None:
        self.chat.expired(request_id)
