"""The Simplified Chinese words the listen classifier (`bridge.decisions.classifier`) reads a
line by: question words and particles, group address, complaints shaped like questions, the
general 你, what-happened questions, continuations. Data only; the rules are the classifier's."""

from __future__ import annotations

import re

QUESTION_WORDS = (
    "怎么", "怎样", "如何", "什么", "为什么", "为啥", "哪", "谁", "多少", "几个", "几点", "是不是",
    "能不能", "可不可以", "有没有", "会不会", "要不要", "咋", "啥", "多久", "多大", "多长", "多高",
    "多远", "多深", "多快", "多重", "几时",
)  # fmt: skip
QUESTION_ENDS = ("吗", "呢", "么")
# ...but a final 么 of 什么, 怎么, 这么 is no particle ("不知道为什么").
NOT_PARTICLE_ME = ("什么", "怎么", "这么", "那么", "多么", "要么", "干么")
# 几 and a measure word asks how many: "要几层", "几个村民", "延迟几刻".
HOW_MANY = re.compile(r"几[个张层刻块次天格组秒分级只颗根本把条种号件瓶片桶堆轮下]")
# What happened, asked with the perfective 了: "钓到什么了", "它说什么了", "去哪了", "怎么了":
# about someone's doings, for the players who saw them.
WHAT_HAPPENED = ("什么了", "啥了", "哪了", "哪儿了", "哪里了", "怎么了")
# ...and the 是…的 of a past event's circumstances: "在哪死的", "什么时候做的".
PAST_EVENT = re.compile(r"(在哪|哪里|哪儿|什么时候|啥时候|几点|怎么)[^是用]{1,4}的$")
# Particles at the end of a line, not counted in its length: "苦力怕吗" is a three-character echo.
PARTICLES = "吗呢么吧啊呀嘛哦"
GROUP = (
    "大家", "有人", "你们", "各位", "兄弟们", "大佬", "老铁", "家人们", "朋友们", "小伙伴",
    # 一起 as a proposal ("一起去打凋零"), not "能一起附魔吗" (both at once).
    "一起去", "一起来", "一起玩", "一起打", "一起挖", "一起建", "一起刷",
    "咱们",
    # What is going on here, and a price: asked of the players here, the sellers.
    "怎么回事", "发生了什么", "我错过了", "多少钱", "怎么卖", "咋卖",
)  # fmt: skip
# 谁 asks which of the players ("谁在下界", "谁收钻石", "谁拿了我的钻石"), unless it asks who
# someone is ("谁是...", "...是谁").
WHO = "谁"
# Question words that ask nothing here: "没怎么卡" (not very), "没什么", "什么的" (and so on),
# "怎么都找不到" (however hard), "哪都" (anywhere).
NOT_ASKING = (
    "没怎么", "不怎么", "没什么", "不是什么", "什么的", "什么都", "啥都", "怎么都", "哪都",
    "哪儿都", "哪里都", "没啥",
)  # fmt: skip
# Not knowing tells, it does not ask: "不知道为什么", "我也不知道怎么弄" (unless a 吗 or "?" asks).
NOT_KNOWING = ("不知道", "不清楚", "不晓得", "不确定")
# Complaints shaped like questions: "怎么又卡了", "服务器怎么这么卡", "什么鬼".
RHETORICAL = (
    "怎么又", "为什么又", "为啥又", "咋又", "怎么这么", "为什么这么", "为啥这么", "咋这么",
    "怎么那么", "怎么老是", "怎么总是", "什么鬼", "搞什么", "什么情况", "啥情况", "凭什么",
    "真的假的", "不会吧",
)  # fmt: skip
YOU = ("你", "您")
# 你 is anyone in a general how-question: "你怎么才能在下界找到要塞", "你要怎么拿到三叉戟",
# "如果你掉进虚空…"; a person otherwise ("你在哪", "你怎么有这么多钻石").
GENERAL_YOU = (
    "才能", "才可以", "要怎么", "得怎么", "该怎么", "需要怎么", "要如何", "如何", "怎样才", "得先",
    "需要什么", "要什么才",
)  # fmt: skip
CONDITION = ("如果你", "要是你", "当你", "假如你")
# A question about "it", "him", "her" leans on what was said before, to the players who heard
# it: "它说什么了", "他在哪".
THIRD_PERSON = ("它", "他", "她")
CONTINUE = ("还有", "另外", "然后")
# "A 还是 B 好": a choice asked without a question word.
CHOICE = re.compile(r".+还是(?!觉得|不|没|算|要|得).+(好|强|快|高|多|划算|合适|厉害|省)$")
LEAD = ("嘿", "喂", "哎", "诶", "请问", "那个", "你好", "hi", "hey")
ABOUT_AFTER = (
    "说", "又", "也", "都", "好", "真", "太", "比", "还", "是", "有时候", "今天", "不", "就", "的",
    "答", "回答", "乱", "刚", "居然", "竟然", "挺",
)  # fmt: skip
REQUESTS = (
    "帮", "告诉", "给我", "解释", "请", "说说", "讲讲", "讲个", "教", "推荐", "算", "介绍", "来个",
    "查", "讲一下", "说一下", "看看", "想知道", "问一下", "问你", "我想要", "我需要", "我想问",
    "求个", "求一个",
)  # fmt: skip
# 你能, 你可以 ask what anyone can do, unless the line asks a person to come, help or give.
CAN = ("能", "可以", "能不能", "可不可以")
TO_A_PERSON = ("我", "咱", "来", "去", "帮", "给", "借", "等", "别", "一下")
