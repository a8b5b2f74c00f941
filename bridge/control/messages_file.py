"""``message.yml``: every line a player can see, as restricted MiniMessage templates.

A template may use style tags (colours, decorations, ``reset``, ``gradient``, ``rainbow``) and
the named placeholders its field declares, written ``<name>``; tags are found as the plugin's
MiniMessage finds them, quoted arguments included (`bridge.control.template_rules`). Click,
hover, insertion and every other interactive tag are refused: buttons are built by the bridge
from the button templates, so owner text can never carry its own action. Required
placeholders (such as ``<message>`` in the reply layout) must be present.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from bridge.control.base import StrictModel
from bridge.control.template_rules import check

MAX_TEMPLATE_CHARS = 1024
MAX_PROMPT_AND_INTENT_CHARS = 2000

# The `/mineclaw` subcommands `help` describes, one `help.<name>` line each.
HELP_COMMANDS = (
    "status",
    "usage",
    "help",
    "listen",
    "ignore_me",
    "reload",
    "model",
    "stop",
    "clear",
    "compact",
    "tools",
    "functions",
    "approve",
    "ai",
    "memory",
    "retry",
    "history",
)

# (allowed placeholders, required placeholders) per template, by "section.field".
PLACEHOLDERS: dict[str, tuple[frozenset[str], frozenset[str]]] = {}


def _declare(field: str, allowed: str = "", required: str = "") -> None:
    PLACEHOLDERS[field] = (frozenset(allowed.split()), frozenset(required.split()))


_declare("gates.no_permission", "player name")
_declare("gates.player_cooldown", "player name seconds", "seconds")
_declare("gates.global_cooldown", "player name seconds", "seconds")
_declare("gates.busy", "player name")
_declare("errors.provider_failure", "player name reason")
_declare("errors.offline", "player name")
_declare("errors.invalid_request", "player name reason")
_declare("errors.not_configured", "player name reason")
_declare("errors.provider_busy", "player name reason")
_declare("errors.provider_unreachable", "player name reason")
_declare("errors.provider_timeout", "player name reason")
_declare("errors.provider_quota", "player name reason")
_declare("errors.provider_misconfigured", "player name reason")
_declare("errors.retry_offer", "player name minutes")
_declare("errors.operator_notice", "player name model kind error")
_declare("errors.function_suspended", "player name function losses minutes", "function")
_declare("chat.empty_question", "player name prefix")
_declare("chat.turn_stopped", "player name")
_declare("listen.enabled", "player name")
_declare("listen.disabled", "player name")
_declare("listen.ignored", "player name")
_declare("listen.included", "player name")
_declare("reply.layout", "name player message", "message")
_declare("reply.first_line", "name player message", "message")
_declare("reply.action_bar", "name text", "text")
_declare("reply.private_layout", "name message", "message")
_declare("queue.place", "player name place", "place")
_declare("queue.already_waiting", "player name place", "place")
_declare("private.asked", "player name question", "question")
_declare("private.usage", "player name")
_declare("private.players_only", "name")
_declare("private.cleared", "player name")
_declare("private.persona_current", "player name persona")
_declare("private.persona_entry", "player name persona description", "persona")
_declare("private.persona_chosen", "player name persona", "persona")
_declare("private.persona_unknown", "player name persona", "persona")
_declare("private.conversation_new", "player name id title", "id")
_declare("private.conversation_limit", "player name limit", "limit")
_declare("private.conversation_list", "player name")
_declare("private.conversation_entry", "player name id title last", "id")
_declare("private.conversation_entry_active", "player name id title last", "id")
_declare("private.conversation_switched", "player name id title", "id")
_declare("private.conversation_renamed", "player name id title", "id")
_declare("private.conversation_deleted", "player name id title active", "id")
_declare("private.conversation_unknown", "player name id", "id")
_declare("private.conversation_busy", "player name id")
_declare("private.which_meant", "player name title", "title")
_declare("reply.thinking", "name player")
_declare("reply.tools", "name player tools", "tools")
_declare("approval.prompt", "requester target command name accept deny", "command accept deny")
_declare(
    "approval.console_prompt", "requester target command name accept deny", "command accept deny"
)
_declare("approval.intent", "requester target command intent name", "intent")
_declare("approval.accept_button", "", "")
_declare("approval.deny_button", "", "")
_declare("approval.accepted", "requester target command name")
_declare("approval.denied", "requester target command name")
_declare("approval.expired", "requester target command name")
_declare("ask.prompt", "player name question", "question")
_declare("ask.gesture_hint", "player name")
_declare("ask.yes_button", "", "")
_declare("ask.no_button", "", "")
_declare("ask.choice_button", "option", "option")
_declare("ask.none_button", "", "")
_declare("ask.answered", "player name question")
_declare("ask.expired", "player name question")
_declare("commands.no_permission", "player name command", "command")
_declare("commands.usage", "player name usage", "usage")
_declare("commands.line", "player name line", "line")
_declare("commands.not_available", "player name what", "what")
_declare("commands.listen_status", "player name state", "state")
_declare("commands.reload_done", "player name version", "version")
_declare("commands.reload_failed", "player name reason", "reason")
_declare("commands.compact_started", "player name")
_declare("commands.compact_queued", "player name")
_declare("commands.compact_result", "player name outcome", "outcome")
_declare("commands.clear_done", "player name")
_declare("commands.stop_done", "player name")
_declare("commands.stop_none", "player name")
_declare("commands.retry_none", "player name")
_declare("history.opened", "player name entries")
_declare("history.empty", "player name")
_declare("commands.retry_started", "player name question", "question")
_declare("commands.model_current", "player name model", "model")
_declare("commands.model_switched", "player name model", "model")
_declare("commands.model_refused", "player name reason", "reason")
_BUDGET = "player name period used limit resets"
_declare("budgets.player_exhausted", _BUDGET, "resets")
_declare("budgets.server_exhausted", _BUDGET, "resets")
_declare("budgets.player_stopped", _BUDGET, "resets")
_declare("budgets.server_stopped", _BUDGET, "resets")
_declare("budgets.usage_line", "player name line", "line")
_declare("memory.remembered", "player name text", "text")
_declare("memory.entry", "player name id scope text", "id text")
_declare("memory.empty", "player name who", "who")
_declare("memory.forgotten", "player name count", "count")
_declare("memory.not_found", "player name id", "id")
_declare("memory.consent", "player name text", "text")
_declare("memory.shared", "player name id", "id")
_declare("memory.unshared", "player name id", "id")
_declare("loops.failing", "player name count tool")
_declare("loops.repeating", "player name count tool")
_declare("commands.model_entry", "player name model", "model")
_declare("commands.model_entry_current", "player name model", "model")
_declare("commands.model_default", "player name model", "model")
_declare("commands.help_header", "player name")
_declare("status.link_up", "player name")
_declare("status.link_down", "player name")
_declare("status.model", "player name model", "model")
_declare("status.model_unavailable", "player name model reason", "model reason")
_declare("status.listen_on", "player name")
_declare("status.listen_off", "player name")
_declare("status.web_on", "player name tools", "tools")
_declare("status.web_off", "player name")
_declare("status.audit", "player name dropped lost", "dropped lost")
_declare("status.sandbox", "player name layers", "layers")
_declare("status.memory", "player name state", "state")
_STATUS_SESSION = "player name turns messages tokens"
_declare("status.session", _STATUS_SESSION, "turns messages tokens")
_declare("status.session_summarised", _STATUS_SESSION, "turns messages tokens")
_declare("status.activity", "player name activity version", "activity version")
for _command in HELP_COMMANDS:
    _declare(f"help.{_command}", "player name usage")


def check_template(template: str, field: str) -> None:
    """Raise ``ValueError`` naming the first tag or placeholder ``field`` may not use."""
    if len(template) > MAX_TEMPLATE_CHARS:
        raise ValueError(f"longer than {MAX_TEMPLATE_CHARS} characters")
    if not template.isprintable() or "§" in template:
        raise ValueError("must not contain control characters, line breaks or §")
    allowed, required = PLACEHOLDERS[field]
    check(template, allowed, required)


class _Section(StrictModel):
    section_name: ClassVar[str] = ""

    @field_validator("*")
    @classmethod
    def _template(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, str) and info.field_name is not None:
            check_template(value, f"{cls.section_name}.{info.field_name}")
        return value


class GateMessages(_Section):
    section_name: ClassVar[str] = "gates"
    no_permission: str = "<red>You may not use the assistant."
    player_cooldown: str = "<gray>Please wait <seconds>s before asking again."
    global_cooldown: str = "<gray>The assistant is cooling down; try again in <seconds>s."
    busy: str = "<gray>The assistant is busy with another request; try again shortly."


class ErrorMessages(_Section):
    section_name: ClassVar[str] = "errors"
    provider_failure: str = "<red>The assistant could not answer right now (<reason>)."
    offline: str = "<gray>The assistant is offline."
    invalid_request: str = "<red>That request could not be handled: <reason>"
    not_configured: str = "<gray>(the assistant is not configured yet)"
    # A turn's model requests failed; the line is chosen by the kind of failure. <reason> is
    # always the bridge's own short wording, never the provider's text.
    provider_busy: str = "<gray>The assistant's model provider is busy; please ask again soon."
    provider_unreachable: str = (
        "<gray>The assistant's model provider cannot be reached right now; please ask again later."
    )
    provider_timeout: str = "<gray>The assistant's model provider did not answer in time."
    provider_quota: str = (
        "<red>The assistant cannot answer: its model provider account is out of credit."
    )
    provider_misconfigured: str = (
        "<red>The assistant cannot answer: its model provider is not set up correctly."
    )
    # After one of those lines, to the asker alone: /mineclaw retry asks the same again.
    retry_offer: str = "<gray>Type /mineclaw retry within <minutes> minutes to ask it again."
    # To operators online, at most once per kind of failure every few minutes: the provider's
    # own error text (redacted), so someone who can fix it learns what went wrong.
    operator_notice: str = "<gold>[<name>] <model> failed (<kind>): <error>"
    # To operators online: a Function whose calls kept killing their worker is suspended.
    function_suspended: str = (
        "<gold>[<name>] Function <function> is suspended for <minutes> minutes: <losses> calls "
        "killed or crashed their worker."
    )


class ChatMessages(_Section):
    section_name: ClassVar[str] = "chat"
    empty_question: str = (
        "<gray>Ask a question after <prefix>, for example: <prefix> how do I make a bed?"
    )
    turn_stopped: str = "<gray>The answer was stopped."


class ListenMessages(_Section):
    section_name: ClassVar[str] = "listen"
    enabled: str = "<yellow><name> is now listening to public chat."
    disabled: str = "<yellow><name> stopped listening; address it with @ai."
    # /mineclaw listen ignore-me | include-me, to the player who typed it.
    ignored: str = "<gray>Your chat is no longer sent to <name> in listen mode; @ai still is."
    included: str = "<gray>Your chat is sent to <name> again while listen mode is on."


class ReplyMessages(_Section):
    section_name: ClassVar[str] = "reply"
    # The first line of a public reply names the asker; every later line uses `layout`.
    first_line: str = "<aqua>[<name>]</aqua> <gray>@<player></gray> <message>"
    layout: str = "<aqua>[<name>]</aqua> <message>"
    action_bar: str = "<gray><name>: <text>"
    private_layout: str = "<light_purple>[<name> → you]</light_purple> <message>"
    # Action-bar frames while the model reasons and while tools run (<tools>: their names).
    thinking: str = "<gray><name> is thinking…"
    tools: str = "<gray>◆ <tools> ◆"


class QueueMessages(_Section):
    """The wait line: a waiting player's place (action bar), a second wake while waiting."""

    section_name: ClassVar[str] = "queue"
    place: str = "<gray>Waiting for <name>: you are #<place> in line"
    already_waiting: str = "<gray>You are already waiting for <name> (#<place> in line)."


class PrivateMessages(_Section):
    """``/ai``: a private conversation between one player and the assistant."""

    section_name: ClassVar[str] = "private"
    asked: str = "<light_purple>[you → <name>]</light_purple> <gray><question>"
    usage: str = (
        "<gray>Ask <name> privately: /ai followed by your question. /ai clear starts over,"
        " /ai stop stops the answer, /ai new and /ai list keep several conversations."
    )
    players_only: str = "<gray>Only players can talk to <name> privately."
    cleared: str = "<gray>Started a new private conversation with <name>."
    # /ai persona [name|default]: <persona> is a soul's name ("none" without one).
    persona_current: str = (
        "<gray>Your private conversations speak as: <persona>. Choose one with /ai persona"
        " and its name:"
    )
    persona_entry: str = "<gray>  <persona> - <description>"
    persona_chosen: str = "<green>Your private conversations now speak as: <persona>."
    persona_unknown: str = "<red>No persona is named <persona>; /ai persona lists them."
    # Several conversations (/ai new|list|switch|rename|delete): <id> is a conversation's short
    # id, <title> its title ("untitled" without one), <last> when the player last asked in it.
    conversation_new: str = (
        "<green>Started conversation <id>: <title>. Your /ai questions go there now."
    )
    conversation_limit: str = (
        "<red>You already keep <limit> conversations, the most allowed; /ai delete one first."
    )
    conversation_list: str = "<gray>Your conversations with <name> (/ai switch and an id):"
    conversation_entry: str = "<gray>  <id>  <title>  <dark_gray>(<last>)"
    conversation_entry_active: str = "<white>> <id>  <title>  <dark_gray>(<last>, active)"
    conversation_switched: str = "<green>Now in conversation <id>: <title>."
    conversation_renamed: str = "<green>Conversation <id> is now called: <title>."
    conversation_deleted: str = (
        "<gray>Deleted conversation <id> (<title>). Your questions go to conversation <active>."
    )
    conversation_unknown: str = "<red>You have no conversation <id>; /ai list shows them."
    conversation_busy: str = (
        "<red>Conversation <id> is still answering; wait for it or /ai stop it first."
    )
    which_meant: str = (
        '<yellow>A new conversation or a question? For a conversation titled "<title>" type'
        ' /ai new "<title>"; to ask it, end the question with ?'
    )


class ApprovalMessages(_Section):
    section_name: ClassVar[str] = "approval"
    # The model's intent is never part of the sentence: it gets a line of its own (`intent`),
    # marked as the assistant's words, so it cannot read as the requester's or the server's.
    prompt: str = (
        "<yellow><name> (the assistant) asks you, on behalf of <requester>, to run"
        " <white><command></white> as you. <accept> <deny>"
    )
    # The two-person rule: the second confirmation of a console command (whitelist.yml
    # console_confirm), asked of a player other than the requester.
    console_prompt: str = (
        "<yellow><name> (the assistant) asks you, on behalf of <requester>, to confirm the"
        " console command <white><command></white>. It runs only if you accept. <accept> <deny>"
    )
    intent: str = "<gray><name> says why: <white><intent>"
    accept_button: str = "<green><bold>[Accept]</bold></green>"
    deny_button: str = "<red><bold>[Deny]</bold></red>"
    accepted: str = "<green>Accepted: <command>"
    denied: str = "<red>Denied: <command>"
    expired: str = "<gray>The request to run <command> expired."

    @model_validator(mode="after")
    def _prompt_fits(self) -> ApprovalMessages:
        # The prompt and intent lines travel as one template, at most 2048 characters.
        if max(len(self.prompt), len(self.console_prompt)) + len(self.intent) > (
            MAX_PROMPT_AND_INTENT_CHARS
        ):
            raise ValueError(
                "prompt (or console_prompt) and intent together must be at most"
                f" {MAX_PROMPT_AND_INTENT_CHARS}"
                " characters"
            )
        return self


class AskMessages(_Section):
    """The model's ``ask_player`` question to the asking player: a yes/no question (answered
    by a click, or a gesture where the plugin detects them) or a choice of up to 5 options."""

    section_name: ClassVar[str] = "ask"
    prompt: str = "<yellow><name> asks you: <white><question>"
    gesture_hint: str = (
        "<gray>Or say yes without clicking: sneak, look straight up, or right-click the air"
        " holding a plain item."
    )
    yes_button: str = "<green><bold>[Yes]</bold></green>"
    no_button: str = "<red><bold>[No]</bold></red>"
    choice_button: str = "<aqua>[<option>]</aqua>"
    none_button: str = "<gray>[None of these]</gray>"
    answered: str = "<gray>Answer sent to <name>."
    expired: str = "<gray>That question from <name> has expired."


class CommandMessages(_Section):
    """Replies to ``/mineclaw`` subcommands; ``line`` carries one plain status or report line."""

    section_name: ClassVar[str] = "commands"
    no_permission: str = "<red>You may not use /mineclaw <command>."
    usage: str = "<gray>Usage: /mineclaw <usage>"
    line: str = "<gray><line>"
    not_available: str = "<gray><what> is not available yet."
    listen_status: str = "<gray>Listen mode is <state>."
    reload_done: str = "<green>Configuration reloaded (version <version>)."
    reload_failed: str = "<red>Reload failed, the old configuration stays: <reason>"
    compact_started: str = "<gray>Compacting the session now."
    compact_queued: str = "<gray>Compaction queued; it runs when the current answer is done."
    compact_result: str = "<gray>Compaction finished: <outcome>."
    clear_done: str = "<gray>Started a new session."
    stop_done: str = "<gray>Stopped the current answer."
    stop_none: str = "<gray>No answer is running."
    retry_none: str = "<gray>You have no failed question to ask again."
    retry_started: str = "<gray>Asking <name> again: <question>"
    model_current: str = "<gray>Model: <model>"
    model_switched: str = "<green>Later answers use <model>."
    model_refused: str = "<red><reason>"
    model_entry: str = "<gray>  <model>"
    model_entry_current: str = "<green>▶ <model> <gray>(in use)"
    model_default: str = "<green>Later answers use the default model, <model>."
    help_header: str = "<gold>Mineclaw commands you may use:"


class StatusMessages(_Section):
    """The lines of ``/mineclaw status`` (open to every player)."""

    section_name: ClassVar[str] = "status"
    link_up: str = "<gray>link: up"
    link_down: str = "<gray>link: down"
    model: str = "<gray>model: <model>"
    model_unavailable: str = "<gray>model: <model> (not available yet: <reason>)"
    listen_on: str = "<gray>listen: on"
    listen_off: str = "<gray>listen: off"
    web_on: str = "<gray>web tools: on (<tools>)"
    web_off: str = "<gray>web tools: off"
    # Audit events not written since start: dropped on a full queue, or refused by the table
    # (each is counted in an audit.dropped or audit.lost record once the table takes rows).
    audit: str = "<gray>audit log: <dropped> events dropped, <lost> lost since start"
    # The OS confinement of Function workers, each layer "on" or "unavailable: why".
    sandbox: str = "<gray>Function sandbox: <layers>"
    # Memory's search: keywords only, or the embedding model and the background catch-up.
    memory: str = "<gray>memory: <state>"
    session: str = "<gray>session: <turns> turns, <messages> messages, about <tokens> tokens"
    session_summarised: str = (
        "<gray>session: <turns> turns, <messages> messages, about <tokens> tokens, summarised"
    )
    activity: str = "<gray>activity: <activity>, configuration version <version>"


class HelpMessages(_Section):
    """One line per subcommand in ``/mineclaw help``; ``<usage>`` is the command's syntax."""

    section_name: ClassVar[str] = "help"
    status: str = "<gold>/mineclaw <usage></gold> <gray>- link, model, listen mode and session"
    usage: str = "<gold>/mineclaw <usage></gold> <gray>- tokens used today and this month"
    help: str = "<gold>/mineclaw <usage></gold> <gray>- this list"
    listen: str = "<gold>/mineclaw <usage></gold> <gray>- send all public chat to the assistant"
    ignore_me: str = "<gold>/mineclaw <usage></gold> <gray>- keep your chat out of listen mode"
    reload: str = "<gold>/mineclaw <usage></gold> <gray>- reload the configuration"
    model: str = "<gold>/mineclaw <usage></gold> <gray>- show, list or switch the model"
    stop: str = "<gold>/mineclaw <usage></gold> <gray>- stop the running answer"
    clear: str = "<gold>/mineclaw <usage></gold> <gray>- start a new session"
    compact: str = "<gold>/mineclaw <usage></gold> <gray>- summarise older turns now"
    tools: str = "<gold>/mineclaw <usage></gold> <gray>- check tools.yml"
    functions: str = "<gold>/mineclaw <usage></gold> <gray>- check the Functions"
    approve: str = "<gold>/mineclaw <usage></gold> <gray>- answer a confirmation prompt"
    ai: str = "<gold>/mineclaw <usage></gold> <gray>- a private conversation (also /ai)"
    memory: str = "<gold>/mineclaw <usage></gold> <gray>- list or delete what the assistant keeps"
    retry: str = "<gold>/mineclaw <usage></gold> <gray>- ask your last failed question again"
    history: str = "<gold>/mineclaw <usage></gold> <gray>- the public session as a book"


class BudgetMessages(_Section):
    """Token budgets: the gate before a turn (``*_exhausted``), the stop between tool rounds
    (``*_stopped``), and the lines of ``/mineclaw usage``."""

    section_name: ClassVar[str] = "budgets"
    player_exhausted: str = (
        "<red>You have used your <period> assistant budget (<used> of <limit> tokens);"
        " it resets <resets>."
    )
    server_exhausted: str = (
        "<red>The server has used its <period> assistant budget (<used> of <limit> tokens);"
        " it resets <resets>."
    )
    player_stopped: str = (
        "<red>The answer was stopped: it would pass your <period> assistant budget"
        " (<used> of <limit> tokens used); it resets <resets>."
    )
    server_stopped: str = (
        "<red>The answer was stopped: it would pass the server's <period> assistant budget"
        " (<used> of <limit> tokens used); it resets <resets>."
    )
    usage_line: str = "<gray><line>"


class MemoryMessages(_Section):
    """Memories: what ``remember`` kept (shown to the asker), the consent question for a
    server memory, and the lines of ``/mineclaw memory``."""

    section_name: ClassVar[str] = "memory"
    remembered: str = "<gray>Remembered: <white><text>"
    entry: str = "<gray><id> (<scope>)</gray> <white><text>"
    empty: str = "<gray>No memories kept for <who>."
    forgotten: str = "<gray>Forgot <count> memories."
    # Also the answer to a share or unshare (it said "to forget" there).
    not_found: str = "<red>There is no memory <id> of yours; /mineclaw memory lists them."
    consent: str = "Keep this for everyone on the server? <text>"
    shared: str = "<gray>Memory <id> is shared: your public questions may bring it up."
    unshared: str = "<gray>Memory <id> is yours alone again: only your /ai questions bring it up."


class HistoryMessages(_Section):
    """``/ai history`` and ``/mineclaw history``: the reply beside the book."""

    section_name: ClassVar[str] = "history"
    opened: str = "<gray>Opened the conversation as a book (<entries> entries)."
    empty: str = "<gray>Nothing to show yet."


class LoopMessages(_Section):
    """The loop breaker's lines to the asking player (the turn is dropped, nothing kept)."""

    section_name: ClassVar[str] = "loops"
    failing: str = (
        "<red>I stopped: my tool calls failed <count> rounds in a row, so trying again would"
        " not help. Please rephrase or ask an operator."
    )
    repeating: str = (
        "<red>I stopped: I was calling <tool> with the same arguments over and over"
        " (<count> times) without getting anywhere."
    )


class MessagesFile(StrictModel):
    """The whole of ``message.yml``; every template has a default."""

    schema_: Literal[1] = Field(alias="schema")
    gates: GateMessages = Field(default_factory=GateMessages)
    errors: ErrorMessages = Field(default_factory=ErrorMessages)
    listen: ListenMessages = Field(default_factory=ListenMessages)
    reply: ReplyMessages = Field(default_factory=ReplyMessages)
    approval: ApprovalMessages = Field(default_factory=ApprovalMessages)
    ask: AskMessages = Field(default_factory=AskMessages)
    queue: QueueMessages = Field(default_factory=QueueMessages)
    private: PrivateMessages = Field(default_factory=PrivateMessages)
    chat: ChatMessages = Field(default_factory=ChatMessages)
    commands: CommandMessages = Field(default_factory=CommandMessages)
    budgets: BudgetMessages = Field(default_factory=BudgetMessages)
    loops: LoopMessages = Field(default_factory=LoopMessages)
    memory: MemoryMessages = Field(default_factory=MemoryMessages)
    history: HistoryMessages = Field(default_factory=HistoryMessages)
    help: HelpMessages = Field(default_factory=HelpMessages)
    status: StatusMessages = Field(default_factory=StatusMessages)
