"""The English words the listen classifier (`bridge.decisions.classifier`) reads a line by:
question words as players type them, group address, greetings and fillers, the words around a
name said to the assistant or about it, and around a "you" that is a person or anyone. Data
only; the rules are the classifier's."""

from __future__ import annotations

QUESTION_START = frozenset(
    "how what what's whats where where's wheres when why who who's whos which whose can could "
    "does do did is are was were should would will shall may might any anyone's hows wat wut "
    "whats' wats hw hwo wht wher whr wen wich whch howto".split()
)
GROUP = frozenset(
    "anyone anybody anyon any1 someone somebody everyone everybody guys yall y'all team "
    "folks".split()
)
# "all" and "people" address the players only as a vocative ("hi all", "you all", "redstone
# ppl: ..."), not as words of the sentence ("all your xp", "if other people are awake").
GROUP_NOUNS = frozenset("ppl people".split())
DETERMINERS = frozenset(
    "other others most some many few the these those all more no any two three new real".split()
)
# "who took my diamonds", "who do i trust": "who" asks the players; "who is herobrine" asks
# something of the world.
WHO = frozenset("who whoever".split())
WHO_KNOWLEDGE = frozenset("is was were are made invented created".split())
GROUP_PHRASES = (
    "who wants", "who's on", "who is on", "who has", "who's got", "who got", "is it just me",
    # What is going on here and now is asked of the players who are here.
    "what i missed", "what did i miss", "what'd i miss", "what is happening", "what's happening",
    "whats happening", "what is going on", "what's going on", "whats going on",
)  # fmt: skip
YOU = frozenset("you u ya your ur you're youre yours yourself you've you'll you'd".split())
CONTINUE = ("and ", "but ", "what about", "how about", "also ", "then ", "so ", "ok and")
# "you" in a general how/can/does question is anyone ("how do you make a smoker")...
GENERAL_START = frozenset(
    "how what what's whats where when why which can could do does is should would hw hwo wat "
    "wats wut wht wher".split()
)
# "if you fall in the void", "when you die": a condition makes "you" and "your" anyone.
CONDITION = frozenset("if when once after before while whenever until".split())
# "how does the warden detect you": "you" as what a mob or block acts on is anyone.
ACTS_ON = frozenset(
    "detect detects hear hears see sees attack attacks hit hits hurt hurts kill kills damage "
    "damages chase chases target targets notice notices spot spots aggro bite bites poison "
    "poisons push pushes follow follows find finds".split()
)
# ...unless the words around it make it a person: "are you", "did you", "you there", "your".
PERSONAL_BEFORE = frozenset(
    "are r were did have has will would could wont won't".split()
)  # fmt: skip
PERSONAL_AFTER = frozenset(
    "there online here still coming going doing building making mining got have want wanna "
    "know remember think mean like guys all two at in on up busy ok alright sure free "
    "already just".split()
)
PERSONAL_FORMS = frozenset("your ur you're youre yours yourself you've you'll you'd".split())
# "can you come", "could you say that again": asking a person to do something...
ASKED_OF_A_PERSON = frozenset(
    "help give lend send bring come tp show sell trade pass throw drop say tell repeat explain "
    "wait stop move follow join invite open hold check".split()
)
# ...and "can you make me one" (but "can you make a farm for skulls" asks what is possible).
FAVOURS = frozenset("get make craft build find grab buy".split())
FOR_ME = frozenset("me us".split())
# Greetings and fillers before a name said to the assistant: "hey bot", "ok claw".
LEAD = frozenset(
    "hey hi hello yo oi ok okay so and but also then pls please plz um uh hmm dear sup hiya "
    "o oh yes yeah ey umm ummm uhh uhm hm hmmm erm well wait btw ah".split()
)
# A name followed by these is talked about ("bot said ...", "bot was wrong"), not to.
ABOUT_AFTER = frozenset(
    "is isnt isn't was wasnt wasn't said says doesnt doesn't dont don't cant can't didnt didn't "
    "knows thinks just always never sucks got gave told answered keeps lies has had seems looks "
    "really actually literally too > < 's is's".split()
)
ABOUT_BEFORE = frozenset(
    "the a an this that ur your our my his her their ask asked asking tell told trust than like "
    "to at about of from with by for use using called name named it".split()
)
QUESTION_AFTER_IS = frozenset("there it this that".split())
# What asks something of the assistant besides a question: a request.
REQUESTS = frozenset(
    "tell explain give show help make list find calculate calc translate roast rate write say "
    "describe recommend suggest teach remind check compare define summarize summarise name "
    "pick choose guess convert count build design plan draw spell read sing search look "
    "please pls plz i'd need".split()
)
# "bot, i need help with my farm", "claw i want a name for my cat": a request in the first person.
I_REQUEST = frozenset("need want wanna would'd like have".split())
TO_LEARN = frozenset("know learn make build find get craft understand ask".split())
ASK_VERBS = frozenset(
    "explain teach recommend suggest define calculate translate describe summarize".split()
)
WH = frozenset("how what why where when which who about if whether".split())
# A question without a question word asks about the game when it names a property of it.
KNOWLEDGE_CUES = frozenset(
    "best worst max maximum minimum recipe crafting craft worth level rate chance spawns "
    "drop drops need needed enchant enchants enchantment good better fastest easiest cheapest "
    "strongest safest y".split()
)
SUBJECTS = frozenset("you u i it they we he she the a an my your this that there".split())
SPEAKING_OF_US = frozenset("i im i'm ima we u you ur my our want wanna lets let's".split())
DEICTIC = frozenset(
    "it that this he she they them him her there those these is was are were it's that's "
    "thats its".split()
)
ARTICLES = frozenset("a an the some my this that these those".split())
# Said after a name cut short, the name is said to that player: "sunny sell me one?".
SAID_AFTER_A_NAME = frozenset(
    "i im i'm pls plz sell give come lend send bring tp help wanna want lets let's ty thx "
    "thanks".split()
) | (YOU | QUESTION_START)
# Words that open a line and are never a name cut short.
COMMON_FIRST = (
    QUESTION_START | LEAD | REQUESTS | GROUP | YOU | GROUP_NOUNS | ABOUT_AFTER | ABOUT_BEFORE
)
