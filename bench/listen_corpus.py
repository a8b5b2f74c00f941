"""A recorded half hour of busy public chat, made by code with a fixed seed: 50 players (a
fifth of them writing Simplified Chinese), banter, questions players ask each other, and
questions for the assistant (by name or alias, without a name, and follow-ups to its
answers), each line labelled with whether it is for the assistant.

The labels are the author's intent when writing each template, not the classifier's rules:
the mix has the cases a simple classifier gets wrong (a knowledge question phrased with a
generic "you", a player named like a mob, a joke that names the assistant, "anyone know ...?"
labelled as a question for the players), so the bench's precision and recall are not 1.0 by
construction. The templates and the classifier were written by the same hand, though: read the
classifier's figures on this corpus as an upper bound for real chat, not a measurement of it.
``python -m bench.listen_corpus`` prints the mix and a sample.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import Literal

SEED = 20261204
PLAYERS = 50
MINUTES = 30
LINES_PER_SECOND = 1.0
ASSISTANT = "Mineclaw"
ALIASES = ("bot", "小爪")

Kind = Literal["banter", "to_players", "for_assistant", "follow_up", "thanks"]


@dataclass(frozen=True, slots=True)
class Line:
    at: float
    """Seconds from the start of the half hour."""
    player: str
    text: str
    kind: Kind
    for_assistant: bool


_NAMES = (
    "Steve Alex Notch Pixel_Fox MinerMike xX_Dragon_Xx Lumi CraftyKate RedstoneRay Blaze "
    "Sky_Walker Tofu BuilderBob Nova_7 EnderElla CaveCarl Mossy Rune_Knight Juniper QuartzQueen "
    "Ferris DiamondDan Wren Sprocket LavaLarry Pebble Cinder_Cat Oakley FrostByte Marlow Zephyr "
    "Kiwi_Kid Hazel TorchTom Bramble Ivy_Iris Gizmo Saffron Onyx Pip Ling_Xiao WangLei ChenYu "
    "LiuMei ZhaoHao Sun_Yi HuangJie XuLin GaoFeng MaTing"
).split()
_ZH_PLAYERS = frozenset(
    "Ling_Xiao WangLei ChenYu LiuMei ZhaoHao Sun_Yi HuangJie XuLin GaoFeng MaTing".split()
)

_BANTER_EN = (
    "lol", "gg", "nice", "brb dinner", "back", "lmao that creeper", "my house just blew up",
    "ok", "wow", "this server is great", "i found diamonds!!", "ugh died again",
    "finally got my elytra", "the sunset looks amazing", "yo", "hi all", "hello everyone",
    "afk", "going to sleep", "night guys", "thx", "np", "haha", "rip", "oof", "same", "true",
    "nah", "no way", "that's so cool", "building a castle rn", "mining at y -58",
    "selling iron for emeralds at spawn", "lag spike", "got it", "on my way", "coming",
    "wait for me", "follow me", "im at the village", "this farm is op", "gonna build a bridge",
    "need more wood", "i love this seed", "phantoms everywhere", "my dog died :(",
    "just beat the ender dragon", "first time on this server", "the nether is scary",
    "check out my tower", "raid incoming", "sorry wrong chat", "nice shot", "lets goooo",
    "ez", "welp", "that was close", "i have 3 stacks of cobble", "who put lava here lol",
    "zombie at my door", "fishing is relaxing", "my wheat farm is done", "k", "bruh",
)  # fmt: skip
_BANTER_ZH = (
    "哈哈哈", "好厉害", "我去吃饭了", "晚安", "卧槽", "这个服务器真好玩", "我挖到钻石了", "又死了",
    "好卡", "来了来了", "等我一下", "666", "牛啊", "在建房子", "苦力怕炸了我的家", "下界好可怕",
    "终于有鞘翅了", "我回来了", "挂机中", "这个种子不错", "打败末影龙了",
)  # fmt: skip
_TO_PLAYERS_EN = (
    "{other} where are you?", "{other} can you come help?", "@{other} wanna trade?",
    "{other} did you take my iron?", "anyone got spare iron?",
    "who wants to go to the nether?", "is anyone at spawn?",
    "can someone help me with the wither?", "are you still mining?",
    "where did you put the chest?", "u coming?", "what are you building?",
    "how did you get so many diamonds?", "wanna team up?", "can i join your base?",
    "you there?", "what?", "why?", "really?", "{other} how did you make that farm?",
    "guys where is the end portal?", "anyone know the coords of the village?",
    "{other} what's your base coords", "did you see that?", "where are you guys",
    "{other} u online?", "anyone want to trade?", "can you give me some food?",
    "{other} nice build, how long did it take?", "who is on voice?", "{other} lol what",
)  # fmt: skip
_TO_PLAYERS_ZH = (
    "{other}你在哪", "大家谁有多余的铁？", "有人一起去下界吗", "你的房子在哪里？",
    "{other}能来帮我一下吗", "真的吗", "你们在干嘛", "谁有附魔书？", "{other}你在线吗？",
    "你怎么有这么多钻石？",
)  # fmt: skip
_NAMED_EN = (
    "{name}, how do I make a beacon?", "hey {name} what's the recipe for a cake",
    "@{name} how many obsidian for a nether portal?", "{name} what time is it",
    "{alias} how do I breed villagers?", "{name} can you tell me how to find a stronghold",
    "yo {alias}, what does mending do", "{name} where do axolotls spawn?",
    "{name} help me make a map", "ok {name} what's the best sword enchant",
)  # fmt: skip
_NAMED_ZH = (
    "{name}，信标怎么做？", "{name}怎么附魔", "@{name} 下界传送门要多少黑曜石",
    "{alias}，村民怎么繁殖？", "{alias}钻石在哪一层？",
)  # fmt: skip
_UNNAMED_EN = (
    "how do I craft a beacon?", "what's the recipe for a piston",
    "where can I find ancient debris?", "how do I tame a fox", "what level do diamonds spawn at?",
    "do villagers need beds to breed?",
    "what food gives the most saturation?", "is there a command to see my coordinates?",
    "how far apart do nether portals need to be?", "what's the best enchantment for a pickaxe?",
    "how do i make a potion of night vision", "how do you make a potion of strength?",
    "how do you get a trident?", "what mobs drop gunpowder?", "how do i kill a blaze?",
    "how many eyes of ender do i need", "why won't my crops grow?", "what's a good xp farm design?",
    "how do I get rid of phantoms", "can pigs be leashed?",
)  # fmt: skip
_UNNAMED_ZH = (
    "钻石在哪一层最多？", "怎么做蛋糕", "村民需要床才能繁殖吗", "怎么驯服狐狸", "经验修补有什么用",
    "下界合金怎么获得？", "怎么找到要塞",
)  # fmt: skip
_MENTION_EN = (
    "{name} is so slow today lol",
    "i asked {name} earlier",
    "thanks {name}",
    "{name} gg",
)
_FOLLOW_UP_EN = (
    ("and how many do I need?", True), ("what about for a smoker?", True),
    ("can you explain that again?", True), ("and where do I find it?", True),
    ("thanks!", False), ("ty", False), ("ok got it", False), ("is that in survival too?", True),
)  # fmt: skip
_FOLLOW_UP_ZH = (("那蛋糕呢", True), ("还有别的办法吗？", True), ("谢谢", False), ("好的", False))

# Shares of the lines that are not follow-ups (a follow-up is drawn after an assistant question).
_SHARES: tuple[tuple[str, float], ...] = (
    ("banter", 0.66),
    ("to_players", 0.20),
    ("named", 0.035),
    ("unnamed", 0.085),
    ("mention", 0.02),
)


def _pick(rng: random.Random, share: tuple[tuple[str, float], ...]) -> str:
    roll, total = rng.random(), 0.0
    for name, weight in share:
        total += weight
        if roll < total:
            return name
    return share[-1][0]


def _styled(rng: random.Random, text: str) -> str:
    """How people type: sometimes all lower case, sometimes without the question mark."""
    if rng.random() < 0.3:
        text = text.lower()
    if text.endswith("?") and rng.random() < 0.2:
        text = text[:-1]
    return text


def corpus(seed: int = SEED) -> list[Line]:
    rng = random.Random(seed)
    players = _NAMES[:PLAYERS]
    lines: list[Line] = []
    pending: list[tuple[float, str]] = []  # (when, player) follow-ups due
    at = 0.0
    end = MINUTES * 60.0
    while True:
        at += rng.expovariate(LINES_PER_SECOND)
        if at >= end:
            break
        due = [p for p in pending if p[0] <= at]
        if due:
            pending.remove(due[0])
            player = due[0][1]
            zh = player in _ZH_PLAYERS
            text, label = rng.choice(_FOLLOW_UP_ZH if zh else _FOLLOW_UP_EN)
            kind: Kind = "follow_up" if label else "thanks"
            lines.append(Line(at, player, _styled(rng, text), kind, label))
            continue
        player = rng.choice(players)
        zh = player in _ZH_PLAYERS
        other = rng.choice([p for p in players if p != player])
        alias = ALIASES[1] if zh else ALIASES[0]
        what = _pick(rng, _SHARES)
        values = {"name": ASSISTANT, "alias": alias, "other": other}
        if what == "banter":
            line = Line(at, player, rng.choice(_BANTER_ZH if zh else _BANTER_EN), "banter", False)
        elif what == "to_players":
            text = rng.choice(_TO_PLAYERS_ZH if zh else _TO_PLAYERS_EN).format(**values)
            line = Line(at, player, text, "to_players", False)
        elif what == "mention":
            line = Line(at, player, rng.choice(_MENTION_EN).format(**values), "banter", False)
        else:
            pool = (
                (_NAMED_ZH if zh else _NAMED_EN)
                if what == "named"
                else (_UNNAMED_ZH if zh else _UNNAMED_EN)
            )
            line = Line(at, player, rng.choice(pool).format(**values), "for_assistant", True)
            if rng.random() < 0.3:  # the assistant answers in a few seconds; they follow up
                pending.append((at + rng.uniform(8, 25), player))
        lines.append(
            Line(line.at, line.player, _styled(rng, line.text), line.kind, line.for_assistant)
        )
    return lines


def describe(lines: list[Line], minutes: float) -> None:
    """Print a corpus's mix: lines, players, minutes, lines for the assistant, kinds."""
    kinds = Counter(line.kind for line in lines)
    labelled = sum(line.for_assistant for line in lines)
    speakers = len({line.player for line in lines})
    print(f"{len(lines)} lines from {speakers} players over {minutes:.0f} minutes;", end=" ")
    print(f"{labelled} for the assistant")
    print(", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items())))


def main() -> None:
    lines = corpus()
    describe(lines, MINUTES)
    for line in lines[:25]:
        print(f"{line.at:7.1f}  {line.player:<14} {'*' if line.for_assistant else ' '} {line.text}")


if __name__ == "__main__":
    main()
