"""What a fact is about: its entity (who or what) and attribute (which property of it).

"The user lives in Lisbon." is about the user's home city; "The user's sister
lives in Porto." about the sister's home city; "Acme Corp has 200 seats on
Pro." about Acme Corp's seat count; "The Pro plan costs 59 euros." about the
Pro plan's price. Two facts may replace each other only when both agree.

Offline and deterministic, with no model: an agent's ``key`` names the
attribute outright (the strongest signal); otherwise the sentence is read in
the shape most facts have — an optional preamble ("Update:", "From next
month", "X says that"), a subject noun phrase up to the first verb, and a
predicate. The subject ends at the first verb: one of the reader's own verbs
and auxiliaries, else a verb form of Brill's tagger lexicon (``LEXICON``:
"Kafka expanded to 9 brokers" is about Kafka). A note without a subject ("Moved the
broker off RabbitMQ"), or the team's ("We moved payroll to Deel"), is about the thing
its verb acts on. The entity is that noun phrase
(pronouns and "the user" folded to one name); the attribute comes from what
the predicate says, through a small lexicon of the properties agents keep
writing about (home city, employer, manager, price, seat count, version,
region, schedule, diet…), then the unit
of a number ("200 seats" → seat count), then the head of the subject phrase
when it names a property ("The staging cluster's region is …", "the rate
limit on the Pro plan is …"). When none of these speaks, the attribute is
empty — unknown, never guessed from a shared word.
"""

from __future__ import annotations

import gzip
import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

SOURCE_KEY = "key"
SOURCE_TEXT = "text"
SOURCE_REVIEWER = "reviewer"
# Common English words and their most frequent tags, from Brill's tagger lexicon (training/lexicon.py;
# docs/MODELS.md): the verb forms the reader's own list lacks ("Kafka expanded to 9 brokers"), and what
# is not a name ("Initech" is not in it).
LEXICON = Path(__file__).with_name("lexicon.tsv.gz")
LEXICON_SHA256 = "7bace52b9fdc7d7d02199f081747153320b5aeffa462848adefef9de7ca39738"


def _reader_fingerprint() -> str:
    """This reader: its code and its word list. Any change to either reads stored facts again (cheaply)."""
    digest = hashlib.sha256(Path(__file__).read_bytes())
    digest.update(LEXICON_SHA256.encode())
    return digest.hexdigest()[:12]


# Stored with each subject it reads (``Memory.subject_reader``).
READER = _reader_fingerprint()


@dataclass(frozen=True)
class Subject:
    entity: str
    attribute: str
    source: str = SOURCE_TEXT

    @property
    def label(self) -> str:
        """ "the user's home city", "acme corp's seat count", "the user": the reading itself, in lower case."""
        return self._label(_display_entity(self.entity))

    def label_as_written(self, text: str) -> str:
        """The label with names cased as ``text``, the fact read, writes them: "Acme Corp's seat count",
        "the user's sister Ana's home city" — for people to read (cards, the memory browser, reasons)."""
        return self._label(_display_entity(_cased_as_written(self.entity, text)))

    def _label(self, entity: str) -> str:
        if not self.attribute:
            return entity
        owner = entity + ("'" if entity.endswith("s") else "'s")
        return f"{owner} {self.attribute}" if entity else self.attribute


_PEOPLE_OF_THE_HUB = ("user", "speaker", "team")


def _display_entity(entity: str) -> str:
    if entity in _PEOPLE_OF_THE_HUB or entity.startswith(("user's", "team's", "speaker's")):
        return "the " + entity
    return entity


_WRITTEN_WORD = re.compile(r"[^\W_][\w&-]*")
_SENTENCE_OPENING = re.compile(r"(?:^|[.!?:;]\s+|\n)[\"'“‘(\[]*$")


def _cased_as_written(entity: str, text: str) -> str:
    """Each word of the lower-case ``entity`` as ``text`` writes it, where it writes it with capitals.

    A capital inside a sentence is the word's own ("Ana", "Corp", "EU"); one that opens a sentence may be
    only the opening's, so there it counts for a word no common lower-case word is ("Acme", "5G", "Maya") and
    not for one that is ("Staging cluster …" stays "staging cluster", and so does a pet named "Dash").
    "user", "speaker" and "team" are the hub's own words and stay as they are.
    """
    inside: dict[str, str] = {}
    opening: dict[str, str] = {}
    for match in _WRITTEN_WORD.finditer(text):
        word = match.group()
        if word == word.lower():
            continue
        opens = bool(_SENTENCE_OPENING.search(text[: match.start()]))
        (opening if opens else inside).setdefault(word.lower(), word)

    def as_written(word: str) -> str:
        base, possessive = (word[:-2], "'s") if word.endswith("'s") else (word, "")
        if base in _PEOPLE_OF_THE_HUB:
            return word
        common = lexicon().get(base, "FW") != "FW"  # a foreign word ("maya") is no common English one
        written = inside.get(base) or (None if common else opening.get(base))
        return (written or base) + possessive

    return " ".join(as_written(word) for word in entity.split(" "))


# ---------------------------------------------------------------------------------------------
# Lexicons. Written from what facts about people, teams, systems and customers commonly say —
# not fitted to any evaluation story.

# Predicate patterns → attribute. Checked in order against the predicate (lower case).
_ATTRIBUTE_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"\b(?:lives|living|lived|resides?|residing|based)\b.*\b(?:in|at)\b", "home city"),
    # A bare "live" is the verb only where the predicate opens with it ("live in Porto", "still live in …"):
    # "saw the band live at the Roundhouse" is a concert, not a home.
    (
        r"^(?:(?:now|still|currently|also|really|do|does|did|to|will|would|can|could|used)\s+)*live\b.*\b(?:in|at)\b",
        "home city",
    ),
    (r"\b(?:relocat\w*|mov(?:ed|es|ing|e))\s+(?:back\s+|house\s+|over\s+)?(?:in|out|abroad|away)\b", "home city"),
    # "moved to Berlin", "relocated from Porto to Utrecht": a move to a place with a name.
    (
        r"(?-i:\b(?:[Rr]elocat\w*|[Mm]ov(?:ed|es|ing|e))\b(?:\s+from\s+[A-Z][\w-]*(?:\s+[A-Z][\w-]*)?)?"
        r"\s+(?:back\s+)?to\s+(?!(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day|Q\d|v?\d|"
        r"(?:Jan|Febr)uary|March|April|May|June|July|August|(?:Septem|Octo|Novem|Decem)ber)[A-Z])",
        "home city",
    ),
    # "works from home", "stays at home", "the home office" say where someone works or is, not where they live.
    (
        r"(?<!from )(?<!at )\bhome(?: city| town|town)?\b(?! office)|\bmoved (?:house|back|home)\b|\bmoved out\b",
        "home city",
    ),
    (r"\breports? to\b|\bmanag(?:er|ed by)\b|\bboss\b|\bline manager\b", "manager"),
    (
        # "joined Globex", "joined a startup"; "joined the climbing wall" is no job.
        r"\b(?:works?|working|worked) (?:at|for)\b|\bemployer\b|\bemployed\b|\bhired by\b"
        r"|\bjoined\s+(?:the\s+)?(?-i:[A-Z])|\bjoined\s+(?:a|an|the)\s+(?:company|startup|firm|bank|agency)\b"
        r"|\bleft \w+ to join\b",
        "employer",
    ),
    (r"\b(?:works?|working|worked) as\b|\bjob title\b|\brole\b|\bpromoted\b", "role"),
    (r"\bcontact\b|\bpoint of contact\b", "contact"),
    (r"\bcosts?\b|\bpriced?\b|\bprices?\b|\bcharge[sd]?\b|\bper seat\b|\bper month\b|\bsubscription fee\b", "price"),
    (r"\bseats?\b|\blicen[cs]es\b", "seat count"),
    (r"\brate limit\b|\breq(?:uests)?/s\b|\brequests per (?:second|minute)\b|\bthrottl", "rate limit"),
    (r"\bregion\b|\b(?:eu|us|ap|ca|sa|me|af)-(?:west|east|north|south|central|northeast|southeast)-\d\b", "region"),
    (r"\bdatabase\b|\bpostgres(?:ql)?\b|\bmysql\b|\bmongodb\b|\bsqlite\b|\bdynamodb\b|\bcassandra\b", "database"),
    (r"\bqueue\b|\bbroker\b|\brabbitmq\b|\bsqs\b|\bkafka\b|\bredis\b|\bcelery\b", "job queue"),
    (
        r"\bvegetarian\b|\bvegan\b|\bpescatarian\b|\beats? (?:meat|fish|steak|beef|pork|chicken|bacon|burgers?)\b"
        r"|\bdiet\b|\bgluten\b",
        "diet",
    ),
    (r"\b(?:drinks?|drinking|teetotal|sober|alcohol|beer|wine)\b", "drinking"),
    # "Smoke alarms were replaced" names a device, not a habit.
    (r"\bsmok(?:es|ing|er|e)\b(?!\s+(?:alarm|detector)s?\b)|\bcigarettes?\b|\bvap(?:es|ing)\b", "smoking"),
    (
        r"\bmarried\b|\bdivorced\b|\bengaged\b|\bpartner\b|\bgirlfriend\b|\bboyfriend\b|\bwife\b|\bhusband\b"
        # "is single", "single again": a person's status; "the band's new single" is a record.
        r"|\b(?:is|am|are|was|were|be|been|being|still|now|stays?|stayed|become|became|again)\s+single\b"
        r"|\bsingle\s+(?:again|now|parent|mum|mom|dad|father|mother)\b",
        "relationship",
    ),
    (r"\bbirthday\b|\bborn\b", "birth"),
    (r"\b\d+ years? old\b|\baged? \d+\b", "age"),
    (r"\b(?:support|opening|office|business) hours\b|\bopen from\b|\bopening times\b", "opening hours"),
    # "open 8 to 17", "available 12 hours a day", "staffed 24/7": when someone can be reached.
    (
        r"\b(?:open|available|staffed|reachable|closed)\b.*?(?:\b\d{1,2}(?:[:.]\d\d)?\s*(?:to|until|-|–)\s*\d"
        r"|\b\d+ hours a day\b|\b24/7\b|\bround the clock\b)",
        "opening hours",
    ),
    (r"\btime ?zone\b|\bUTC[+-]\d|\bCET\b|\bPST\b|\bEST\b", "time zone"),
    (r"\bstand-?ups?\b|\bmeetings?\b|\bsync\b|\b1:1\b|\bone-on-one\b", "meeting schedule"),
    (
        r"\bdeploy(?:s|ed|ing|ment)?\b.*\b(?:on|every)\b.*\b(?:monday|tuesday|wednesday|thursday|friday|day)s?\b",
        "deploy schedule",
    ),
    (r"\bon-?call\b|\bpager\b|\bpaging\b", "on-call"),
    (r"\boffice\b|\bremote(?:ly)?\b|\bhybrid\b|\bwork(?:s|ing)? from home\b", "work location"),
    # Not a bare "run": services run on ports, pipelines run nightly.
    (
        r"\b(?:running|jogg\w*|swim\w*|gym|yoga|cycling|exercis\w*|workouts?|work out)\b"
        r"|\bruns? (?:\d+|a|an)\s*(?:k|km|miles?|marathon|half)\b",
        "exercise",
    ),
    (r"\bdogs?\b|\bcats?\b|\bpets?\b|\bpupp(?:y|ies)\b|\bkittens?\b", "pet"),
    (
        r"\bspeaks?\b|\bnative language\b|\blanguage\b|\b(?:english|german|french|spanish|italian|portuguese|"
        r"dutch|swedish|norwegian|danish|finnish|polish|czech|greek|turkish|russian|ukrainian|arabic|hebrew|hindi|"
        r"japanese|korean|chinese|mandarin|cantonese)\b",
        "language",
    ),
    (r"\bphone\b|\bmobile number\b|\bemail\b|\baddress\b", "contact details"),
    (
        r"\bowns?\b|\bowner\b|\bowned by\b|\bmaintain(?:s|ed by)\b|\bresponsible for\b|\bin charge of\b|\btook over\b",
        "owner",
    ),
    (r"\bretention\b|\bkept for\b|\bretained\b|\bbackups?\b", "retention"),
    (r"\bbudget\b", "budget"),
    (r"\bdeadline\b|\blaunch(?:es|ed|ing)? (?:on|in|date)\b|\bdue\b|\bships? (?:on|in)\b|\brelease date\b", "date"),
    (r"\btimeouts?\b", "timeout"),
    (r"\bquota\b|\bstorage\b|\bdisk\b|\bupload (?:size|limit)\b", "quota"),
    (r"\bframework\b|\breact\b|\bvue\b|\bangular\b|\bsvelte\b|\bdjango\b|\brails\b|\bflask\b", "framework"),
    (r"\btests?\b.*\b(?:pytest|jest|vitest|mocha|unittest|junit)\b|\btest framework\b", "test framework"),
    (r"\bcloud\b|\baws\b|\bgcp\b|\bazure\b|\bhosted on\b|\bhosting\b", "hosting"),
    (r"\bcoffee\b|\btea\b", "coffee"),
    (r"\bfavou?rite\b", "favourite"),
    # "Printer paper comes from Staples", "Beans are ordered from a roaster": where it comes from.
    (r"\b(?:comes?|coming|came|ordered|bought|delivered|supplied|sourced)\s+(?:from|by)\b|\bsupplier\b", "supplier"),
    # "Book club is on Mondays", "every Tuesday", "moved to Tuesday and Friday": when it recurs — not
    # one day ("made pizza on Friday" is an event, not a schedule).
    (
        r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)days\b|\bevery (?:mon|tues|wednes|thurs|fri|satur|sun)day\b"
        r"|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day(?:,\s*|\s+(?:and|or|to)\s+)(?:mon|tues|wednes|thurs|fri|satur|sun)day\b",
        "schedule",
    ),
)
_ATTRIBUTE_RES = tuple((re.compile(p, re.IGNORECASE), a) for p, a in _ATTRIBUTE_PATTERNS)

# An allergy is its allergen's: "Noor has a sesame allergy." and "Noor's egg allergy has resolved." are two of her
# properties, and neither is her diet ("The user is vegan."). "allergic to cats" names the allergen after.
_ALLERGY = re.compile(
    r"\b(?:(?P<before>[a-z][a-z-]*)\s+)?allerg(?:y|ies)\b"
    r"|\ballergic\s+to\s+(?:(?:the|all|any|some|most)\s+)?(?P<after>[a-z][a-z-]*)",
    re.IGNORECASE,
)
# Words before "allergy" that name no allergen.
_NO_ALLERGEN_WORDS = (
    "a an the her his their my our your its no any this that severe mild known new serious food suspected "
    "confirmed possible life-threatening bad has have had having with of for and or is are was were got gets "
    "developed developing other multiple several seasonal"
)
_NO_ALLERGEN = frozenset(_NO_ALLERGEN_WORDS.split())


def _allergy(text: str) -> str:
    """ "sesame allergy", "cat allergy", or "allergy" where none is named; "" when ``text`` names no allergy."""
    found = ""
    for match in _ALLERGY.finditer(text):
        allergen = (match.group("before") or match.group("after") or "").lower()
        if allergen and allergen not in _NO_ALLERGEN:
            return f"{singular(allergen)} allergy"
        found = "allergy"
    return found


# A number's unit → attribute ("200 seats" → seat count).
_UNIT_ATTRIBUTES = {
    "seat": "seat count",
    "seats": "seat count",
    "licences": "seat count",
    "licenses": "seat count",
    "users": "user count",
    "customers": "customer count",
    "employees": "headcount",
    "people": "headcount",
    "engineers": "headcount",
    "euros": "price",
    "euro": "price",
    "eur": "price",
    "dollars": "price",
    "usd": "price",
    "gbp": "price",
    "pounds": "price",
    "gb": "size",
    "tb": "size",
    "mb": "size",
    "days": "duration",
    "weeks": "duration",
    "months": "duration",
    "minutes": "duration",
    "hours": "duration",
    "ms": "latency",
    "%": "percentage",
    "mg": "dose",
    "mcg": "dose",
    "replicas": "replica count",
    "nodes": "node count",
    "pods": "pod count",
}

# Auxiliaries and common verbs in every form a subject phrase ends before.
_AUXILIARIES = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "'s",
        "'re",
        "has",
        "have",
        "had",
        "having",
        "do",
        "does",
        "did",
        "will",
        "would",
        "shall",
        "should",
        "can",
        "could",
        "may",
        "might",
        "must",
        "isn't",
        "aren't",
        "wasn't",
        "weren't",
        "hasn't",
        "haven't",
        "hadn't",
        "doesn't",
        "don't",
        "didn't",
        "won't",
        "wouldn't",
        "can't",
        "cannot",
        "couldn't",
        "shouldn't",
        # "get" as the passive's auxiliary: "Lunch got moved to 1 pm." is about lunch, not a "lunch got".
        "got",
        "gets",
        "gotten",
    ]
)
_VERB_BASES = [
    "live",
    "move",
    "relocate",
    "work",
    "join",
    "leave",
    "report",
    "manage",
    "cost",
    "charge",
    "run",
    "use",
    "prefer",
    "like",
    "love",
    "hate",
    "enjoy",
    "want",
    "need",
    "plan",
    "intend",
    "own",
    "keep",
    "go",
    "come",
    "get",
    "make",
    "take",
    "give",
    "say",
    "tell",
    "think",
    "believe",
    "know",
    "feel",
    "seem",
    "become",
    "start",
    "stop",
    "begin",
    "end",
    "switch",
    "migrate",
    "upgrade",
    "downgrade",
    "deploy",
    "ship",
    "launch",
    "release",
    "host",
    "hold",
    "store",
    "send",
    "receive",
    "pay",
    "buy",
    "sell",
    "sign",
    "renew",
    "cancel",
    "drop",
    "add",
    "remove",
    "replace",
    "retire",
    "support",
    "handle",
    "eat",
    "drink",
    "smoke",
    "play",
    "watch",
    "read",
    "write",
    "speak",
    "study",
    "learn",
    "teach",
    "visit",
    "travel",
    "meet",
    "call",
    "email",
    "ask",
    "answer",
    "help",
    "build",
    "break",
    "fix",
    "test",
    "try",
    "attend",
    "own",
    "lead",
    "head",
    "chair",
    "belong",
    "contain",
    "include",
    "require",
    "allow",
    "block",
    "limit",
    "cap",
    "expire",
    "retain",
    "back",
    "log",
    "page",
    "alert",
    "wake",
    "sleep",
    "swim",
    "cycle",
    "walk",
    "drive",
    "ride",
    "fly",
    "hit",
    "reach",
    "exceed",
    "grow",
    "shrink",
    "rise",
    "fall",
    "increase",
    "decrease",
    "raise",
    "lower",
    "double",
    "halve",
    "set",
    "change",
    "open",
    "close",
    "rotate",
    "scale",
    "serve",
    "process",
    "route",
    "fail",
    "crash",
    "recover",
    "restore",
    "migrate",
    "cache",
    "sync",
    "pass",
    "choose",
    "pick",
    "hire",
    "install",
    "wear",
    "cut",
    "see",
]


def _inflections(base: str) -> set[str]:
    forms = {base}
    if base.endswith("e"):
        forms |= {base + "s", base + "d", base[:-1] + "ing"}
    elif base.endswith("y") and len(base) > 2 and base[-2] not in "aeiou":
        forms |= {base[:-1] + "ies", base[:-1] + "ied", base + "ing"}
    elif base.endswith(("s", "sh", "ch", "x", "z", "o")):  # "goes"
        forms |= {base + "es", base + "ed", base + "ing"}
    else:
        forms |= {base + "s", base + "ed", base + "ing"}
        if len(base) <= 4 and base[-1] not in "aeiouwxy" and base[-2] in "aeiou" and base[-3:-2] not in "aeiou":
            forms |= {base + base[-1] + "ed", base + base[-1] + "ing"}
        if base.endswith("l") and base[-2] in "aeiou" and base[-3:-2] not in "aeiou":
            forms |= {base + "led", base + "ling"}  # British spelling: "travelled", "cancelling"
    return forms


_IRREGULAR = [
    "quit",  # "The user quit smoking in March": its past is itself, and the lexicon tags it a base form
    "went",
    "gone",
    "came",
    "got",
    "gotten",
    "made",
    "took",
    "taken",
    "gave",
    "given",
    "said",
    "told",
    "thought",
    "knew",
    "known",
    "felt",
    "became",
    "began",
    "begun",
    "ran",
    "held",
    "kept",
    "left",
    "paid",
    "bought",
    "sold",
    "sent",
    "built",
    "broke",
    "broken",
    "wrote",
    "written",
    "spoke",
    "spoken",
    "read",
    "met",
    "ate",
    "eaten",
    "drank",
    "drunk",
    "drove",
    "driven",
    "rode",
    "ridden",
    "flew",
    "flown",
    "grew",
    "grown",
    "fell",
    "fallen",
    "set",
    "led",
    "slept",
    "swam",
    "woke",
    "hit",
    "sat",
    "stood",
    "won",
    "lost",
    "chose",
    "chosen",
    "wore",
    "worn",
    "saw",
    "seen",
]
_VERBS = frozenset(form for base in _VERB_BASES for form in _inflections(base)) | frozenset(_IRREGULAR)
# Verbs by which a note says it changed a thing: in the past tense at the head of a note they are its verb,
# never a qualifier of a noun ("Moved billing alerts to Opsgenie", "Changed support hours to 8-18").
_CHANGE_VERB_BASES = (  # noqa: SIM905 - a word list reads better as text
    "move switch change swap migrate replace upgrade downgrade rename reschedule push hand renew lower raise bump "
    "extend shorten increase decrease reduce transfer"
).split()
_CHANGED_PAST = frozenset(
    form for base in _CHANGE_VERB_BASES for form in _inflections(base) if form.endswith("d") and form != base
)
_CHANGE_VERBS = frozenset(form for base in _CHANGE_VERB_BASES for form in _inflections(base))
_MODALS_AND_ADVERBS = frozenset(
    ["now", "still", "no", "longer", "also", "just", "already", "currently", "usually", "always", "never", "often"]
)

_PERSON_NOUNS = frozenset(
    [
        "sister",
        "brother",
        "mother",
        "father",
        "mum",
        "mom",
        "dad",
        "parents",
        "parent",
        "wife",
        "husband",
        "partner",
        "girlfriend",
        "boyfriend",
        "son",
        "daughter",
        "child",
        "children",
        "kids",
        "kid",
        "baby",
        "grandmother",
        "grandfather",
        "grandma",
        "grandpa",
        "aunt",
        "uncle",
        "cousin",
        "niece",
        "nephew",
        "friend",
        "friends",
        "colleague",
        "colleagues",
        "neighbour",
        "neighbor",
        "flatmate",
        "roommate",
        "boss",
        "manager",
        "doctor",
        "physiotherapist",
        "therapist",
        "dentist",
        "landlord",
        "assistant",
        "family",
        "team",
    ]
)
_USER_WORDS = frozenset({"user", "the user", "our user", "customer"})
_FIRST_PERSON = {"i": "speaker", "me": "speaker", "my": "speaker", "we": "team", "our": "team", "us": "team"}
_THIRD_PERSON = frozenset({"he", "she", "they", "it", "his", "her", "their", "its"})
_DETERMINERS = frozenset(
    [
        "the",
        "a",
        "an",
        "this",
        "that",
        "these",
        "those",
        "our",
        "my",
        "your",
        "their",
        "his",
        "her",
        "its",
        "some",
        "all",
        "every",
        "each",
    ]
)

# A day named in full or by its usual short form ("Monday", "1 May 2026", "Sept 15"): "Marta" or "Decathlon" is none.
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_MONTH_NAME = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|"
    r"nov(?:ember)?|dec(?:ember)?)\.?"
)
_WEEKDAY_NAME = r"(?:mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)(?:day)?"
_DAY_NAMED = rf"(?:{_WEEKDAY_NAME}|(?:{_DAY}\s+{_MONTH_NAME}|{_MONTH_NAME}(?:\s+{_DAY})?)(?:\s+\d{{4}})?)(?![\w'’])"

_PREAMBLE = re.compile(
    r"^\s*(?:(?:update|note|fyi|correction(?: to the previous entry)?|clarification|reminder|heads[- ]up|"
    r"actually|btw|ps|important|update on [^:]{1,40}|"
    # "Reminder set for 24 July: HMRC payment on account due …": when the reminder goes off, not its subject.
    r"(?:reminder|alarm|alert|follow-up) (?:set|scheduled|booked) (?:for|on) (?:\d{1,2}:\d\d|[^:]){1,30}|"
    # "Calendar: oven deep-clean …": where the entry is kept, not its subject (every calendar entry would be one
    # subject). A date after it is the entry's: "Calendar 24 Nov: …".
    r"(?:calendar(?: update| entry)?|diary)"
    rf"(?:,?\s+(?:{_WEEKDAY_NAME}\.?,?\s+)?{_DAY}\s+{_MONTH_NAME}(?:\s+\d{{4}})?)?)"
    r"\s*[:,—–-]\s*)+",
    re.IGNORECASE,
)
# "Time to replace the tyres on the van.", "It's time for a new laptop": the idiom is no subject; what follows is.
_TIME_TO = re.compile(r"^\s*(?:it['’]?s\s+)?(?:about\s+)?time\s+(?:to|for)\s+", re.IGNORECASE)
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_LEADING_TIME = re.compile(
    r"^\s*(?:(?:from|since|as of|starting|until|after|before|by|in|on|last|next|this|every|each)\s+"
    r"(?:[\w'’-]+\s+){0,3}?(?:\w+)\s*,\s*|(?:from|as of|starting)\s+(?:next|this|last)\s+\w+\s+|"
    # "From today heavy recovery is …", "From 15 Sept the skip cutoff is …", "From now on learners can …", "From
    # January Leo sees …": a start, no comma after it.
    rf"(?:from|as of|starting)\s+(?:today|tonight|tomorrow|now on|now|{_DAY_NAMED}(?:\s+(?:to|until)\s+{_DAY_NAMED})?)"
    r"(?:\s+onwards?)?\s+(?=[a-z])|"
    r"(?:now|today|yesterday|currently|recently|lately|finally|also|so)\s*,?\s+)",
    re.IGNORECASE,
)
# "User says they've moved …", "… they're moving …": the reported "they" and its auxiliary, as two words. (Only
# "they": a chat turn's "I'm" and "we're" read as the speaker made two speakers' turns one subject.)
_THEY_CONTRACTION = re.compile(r"\b(they)['’](re|ve)\b", re.IGNORECASE)
_THEY_AUXILIARY = {"re": "are", "ve": "have"}
# A log line's or a calendar entry's stamp: "23:50 bus 412 lost drive …", "Thu 13 Mar 15:00: discovery call …",
# "Wed 18 June — passport renewal": when it happened, not what it is about.
_WEEKDAY = r"(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,?"
_STAMP = re.compile(
    rf"^\s*(?:(?:{_WEEKDAY}\s+)?(?:\d{{1,2}}\s+{_MONTH},?\s+(?:\d{{4}},?\s+)?)?\d{{1,2}}:\d{{2}}"
    r"(?:\s*(?:utc|gmt|am|pm|[a-z]{1,3}t)\b)?(?:\s*[:—–·-])?\s+|"
    rf"{_WEEKDAY}\s+\d{{1,2}}\s+{_MONTH}(?:\s+\d{{4}})?\s*[:—–-]\s+)",
    re.IGNORECASE,
)
_REPORTED = re.compile(
    r"^(?P<who>.{1,60}?)\s+(?:says?|said|mentioned|mentions|told (?:us|me|the \w+)|tells (?:us|me)|"
    r"reports?|reported|confirmed|confirms|thinks|believes|explained|wrote|noted)\s+(?:that\s+)?"
    r"(?P<rest>(?:they|he|she|it|we|i)\b.*)$",
    re.IGNORECASE,
)
# "User says Marco is moving to Turin", "Ana says the VP Eng package is now …": a short speaker (one or two words,
# perhaps after "the"), a verb of saying, then a clause with a subject of its own (a name or a noun phrase, not a
# pronoun, a preposition, a time or a thank-you: `_a_clause_of_its_own`): the fact is about what is said.
_REPORTED_CLAUSE = re.compile(
    r"^(?P<who>(?:the\s+)?[\w'’.-]+(?:\s+[\w'’.-]+)?)\s+(?:says|said|mentions|mentioned|tells us|told us)\s+"
    r"(?:that\s+)?(?P<rest>(?:the\s+|a\s+|an\s+|our\s+)?[\w'’.-]+\b.*)$",
    re.IGNORECASE,
)
_NOT_A_CLAUSE_OPENING = frozenset(
    (  # noqa: SIM905 - a word list reads better as text
        "they he she it we i you their his her its my your this next last from in on at by after before since until "
        "starting as of for when if once every each thanks thank hello hi sorry yes no ok okay"
    ).split()
)
_INVERTED_COPULA = re.compile(
    r"^(?:is|are|was|were)\s+(?:now\s+|still\s+)?(?:our|the|their|his|her|its|my)\s+"
    r"(?P<attr>[\w\s-]{2,40}?)\s+(?:at|of|for|on)\s+(?:the\s+)?(?P<entity>.+)$",
    re.IGNORECASE,
)
_ROLE_COPULA = re.compile(
    r"^(?:is|are|was|were)\s+(?:now\s+|still\s+)?(?:the|our|their)\s+(?P<role>[\w\s-]{2,40}?)"
    r"(?:\s+(?:this|next|for)\s+\w+|\s+now|\s+again)?\s*$",
    re.IGNORECASE,
)
_NAMED_COMPLEMENT = re.compile(r"^(?:is|are|was|were)\s+(?:now\s+|still\s+)?[A-Z]")
_LABELLED = re.compile(r"^(?P<label>[^:=]{2,50}?)\s*(?::|=)\s+(?P<value>.+)$")
_PARENTHESES = re.compile(r"\s*[(\[][^)\]]*[)\]]")
_TOKEN = re.compile(r"[\w'’./+#@-]+|%|[€$£]")
_NUMBER_UNIT = re.compile(r"(?:[€$£]\s?)?\d[\d.,]*\s*(%|[a-zA-Z]{1,12})?")
_CURRENCY = re.compile(r"[€$£]\s?\d")
_PURPOSE = re.compile(r"^\s*(?:to|in order to|when(?: you)?|if you)\s+(?P<goal>[^,;:]{3,60})[,:;]", re.IGNORECASE)
_OF_PHRASE = re.compile(r"^(?P<attr>.+?)\s+(?:of|on|for|at|in)\s+(?:the\s+)?(?P<entity>.+)$")


def subject_of(text: str, key: str = "") -> Subject:
    """Entity and attribute of one fact, from its ``key`` (attribute) and its text."""
    entity, attribute = _read(text)
    if key:
        return Subject(entity, _key_attribute(key), SOURCE_KEY)
    return Subject(entity, attribute, SOURCE_TEXT)


def _key_attribute(key: str) -> str:
    return canonical_attribute(re.sub(r"[_\-.:/]+", " ", key).strip().lower())


def normalise_entity(phrase: str) -> str:
    """Lower case, no determiners or punctuation; "the user"/"User" → "user", "I" → "speaker"."""
    words = [w.strip(".,;:!?\"'“”").lower().replace("’", "'") for w in phrase.split()]
    words = [w for w in words if w]
    if not words:
        return ""
    if words[0] in _FIRST_PERSON:
        head = _FIRST_PERSON[words[0]]
        rest = words[1:]
        if not rest or words[0] not in ("my", "our"):
            return head
        said = phrase.split()[1:]
        if rest[-1] in _PERSON_NOUNS or (len(said) == len(rest) and rest[0] in _PERSON_NOUNS and _a_name(said[1:])):
            return f"{head}'s {' '.join(rest)}"  # "my sister", "my sister Jana"
        words = rest  # "our API", "my notes": a thing, not a person of ours
    while words and words[0] in _DETERMINERS:
        words = words[1:]
    if not words:
        return ""
    while len(words) > 1 and words[-1] in _TRAILING:
        words = words[:-1]  # "waitlist at 5,100": the entity ends before its preposition
    joined = " ".join(words)
    joined = re.sub(r"\bthe user\b", "user", joined)
    if joined in _USER_WORDS:
        return "user"
    return joined


def _a_name(said: list[str]) -> bool:
    """One to three words as written, each capitalised and none a possessive: "Jana", "Tom Reyes" — not
    "Maddie's Ford Focus", which names what Maddie has."""
    return 1 <= len(said) <= 3 and all(word[0].isupper() and not word.replace("’", "'").endswith("'s") for word in said)


_TRAILING = frozenset(["at", "to", "in", "on", "of", "for", "from", "with", "by", "and", "or"])


def _read(text: str) -> tuple[str, str]:
    sentence = _first_clause(text)
    purpose = _PURPOSE.match(sentence)
    if purpose:
        # "To roll back a deploy, re-run …": a procedure is about its goal.
        return normalise_entity(purpose.group("goal")), "procedure"
    sentence = _strip_preamble(sentence)
    reported = _REPORTED.match(sentence)
    reporter = ""
    if reported:
        reporter = normalise_entity(reported.group("who"))
        sentence = reported.group("rest")
    else:
        said = _REPORTED_CLAUSE.match(sentence)
        if said and _a_clause_of_its_own(said.group("rest")):
            sentence = said.group("rest")
    labelled = _LABELLED.match(sentence)
    if labelled:
        value_tokens = _TOKEN.findall(labelled.group("value"))
        split = _subject_end(value_tokens)
        if 0 < split < len(value_tokens) and value_tokens[0][0].isupper() and value_tokens[split][0].isalpha():
            # "Pricing review outcome: Growth becomes $39/month": the value is the fact.
            return _read(labelled.group("value"))
        # "Unit tests: Jest 29", "BM25 nDCG@10 = 0.412": a label and its value. A label that ends in a past tense
        # is a subject and its verb: "Pinecrest signed: 120 seats", "INC-2291 opened: elevated 5xx …".
        label_tokens = _TOKEN.findall(labelled.group("label"))
        last = label_tokens[-1] if label_tokens else ""
        if (
            len(label_tokens) > 1
            and last.endswith("ed")
            and last.islower()
            and lexicon().get(last, "VBN") in ("VBD", "VBN")
        ):
            label_tokens = label_tokens[:-1]
        entity, owned = _split_owner(normalise_entity(" ".join(label_tokens)))
        attribute = _attribute_from(sentence, owned)
        if not attribute and re.match(r"^[~≈<>]?\s*[€$£]?\d", labelled.group("value")):
            attribute = "value"  # "Weekly active teams: 4,120": a label and its figure
        return entity, attribute
    tokens = _TOKEN.findall(sentence)
    if not tokens:
        return "", ""
    split = _subject_end(tokens)
    subject_words, predicate_words = tokens[:split], tokens[split:]
    predicate = " ".join(predicate_words)
    if not subject_words:
        # "Moved the Celery broker off RabbitMQ onto SQS": an agent's note without a subject —
        # about what the verb acts on. "Prefers no meetings …", "Wants a recipe …": about someone
        # the note leaves out — unknown.
        first = predicate_words[0].lower()
        if first.endswith("s") and not first.endswith("ss") and first not in _VERBS:
            return "", _attribute_from(predicate, "")
        return _changed_thing(predicate_words, predicate)
    if len(subject_words) > 10:
        return "", _attribute_from(predicate, "")  # no verb found where a subject should end: unknown
    if subject_words[-1].lower().replace("’", "'").endswith("'s"):
        # Nothing owned after it: "The user's moving to Berlin" is "the user is", not "the user's".
        subject_words = [*subject_words[:-1], subject_words[-1][:-2]]
    subject_phrase = " ".join(subject_words)
    lowered = subject_phrase.lower()
    after_adverbs = predicate_words[_adverbs_before(predicate_words) :]
    if lowered == "we" and _changes_a_thing(after_adverbs):
        # "We moved payroll from Gusto to Deel" is about payroll, as the note "Moved payroll …" is.
        return _changed_thing(after_adverbs, predicate)
    # "The user says they moved …": "they" is the one reported.
    entity = reporter if lowered in _THIRD_PERSON and reporter else normalise_entity(subject_phrase)
    inverted = _INVERTED_COPULA.match(predicate)
    if inverted and _attribute_from(inverted.group("attr"), ""):
        # "Tomás is now our main contact at Acme Corp": about Acme Corp's contact.
        return normalise_entity(inverted.group("entity")), _attribute_from(inverted.group("attr"), "")
    role = _ROLE_COPULA.match(predicate)
    if role and _known_attribute(role.group("role")):
        # "Ivo is the on-call engineer this week": an identity statement about a unique role.
        return normalise_entity(role.group("role")), _attribute_from(role.group("role"), "")
    acted_on = _ACTED_ON.match(predicate)
    if acted_on and not _relative_noun(acted_on.group("owned")):
        # "The cardiologist lowered the user's ramipril to 2.5 mg": about the user's dose.
        owned = acted_on.group("owned")
        return normalise_entity(acted_on.group("owner")), _attribute_from(predicate, "") or canonical_attribute(owned)
    # "User's sister Ana …": a name after a relative noun names the relative; "sister ana" is no property of the user.
    entity, owned = (entity, "") if _names_a_relative(subject_words) else _split_owner(entity)
    changed = _CHANGED_THING.match(predicate)
    if not owned and changed:
        owned = changed["thing"]  # "The user switched running shoes to Hoka": the user's running shoes changed
    named = _NAMED_COMPLEMENT.match(predicate)
    if owned == "" and "'s " in entity and named:
        # "The user's manager is Dana": the manager is what is said about the user.
        owner, _, owned = entity.partition("'s ")
        return owner, _attribute_from("", owned)
    attribute = _attribute_from(predicate, owned)
    if _PLACED.match(predicate):
        # "The user's car was moved to the garage": where the car is, not which car it is.
        attribute = canonical_attribute(f"{owned} location") if owned else "location"
    if attribute == "home city" and not _MOVE_IN_PLACE.search(predicate) and not _person_like(entity, subject_words):
        attribute = ""  # "The API moved to GraphQL": things move too, but have no home city
    if not attribute and not owned:
        role = _AS_ROLE.search(predicate)
        if role:
            attribute = canonical_attribute(role.group("role"))  # "chose Dr. Moreau as their physiotherapist"
    if not attribute and not owned and _known_attribute(entity) and not _POSSESSION.match(predicate):
        # "Standups are at 9:00", "The rate limit is 500 req/s": the subject names the property —
        # not where the predicate gives it something ("Standup now has a rotating facilitator").
        attribute = _attribute_from(entity, "")
    if not attribute and predicate_words and (predicate_words[0][0].isdigit() or predicate_words[0] in "€$£"):
        attribute = "value"  # "Node 22 now", "Weekly active teams 4,480": the subject's figure
    return entity, attribute


def _names_a_relative(subject_words: list[str]) -> bool:
    """ "User's sister Ana", "my friend Leah": an owner's (or the speaker's) relative noun, then only a name.

    Read as owner and owned, "sister ana" would be a property of the user, and "User's sister Ana lives in
    Porto." one subject with "The user lives in Lisbon." — where "The user's sister lives in Porto." is another.
    The name stays in the entity: two daughters are two people.
    """
    for index in range(1, len(subject_words) - 1):
        owner, noun, name = subject_words[index - 1], subject_words[index], subject_words[index + 1 :]
        if (
            (owner.lower().replace("’", "'").endswith("'s") or owner.lower() in ("my", "our"))
            and noun.lower() in _PERSON_NOUNS
            and _a_name(name)
        ):
            return True
    return False


def _a_clause_of_its_own(words: str) -> bool:
    """Whether what follows a verb of saying has a subject and a verb of its own."""
    tokens = _TOKEN.findall(words)
    if not tokens or tokens[0].lower() in _NOT_A_CLAUSE_OPENING or _LEADING_TIME.match(words):
        return False
    split = _subject_end(tokens)
    return 0 < split < len(tokens) and split <= 6


# "switched running shoes to Hoka", "changed the standup to 10:00": the subject changed a thing of theirs.
# No word of the thing is a preposition or an article, and it does not open with a word that names nothing
# ("moved back to", "switched it over to", "changed everything up to").
_NOT_IN_A_THING = r"(?!(?:to|from|into|onto|over|off|of|on|in|at|for|with|by|the|a|an|and|or)\b)"
_NOT_A_THING_FIRST = r"(?!(?:back|it|them|everything|away|out|up)\b)"
_CHANGED_THING = re.compile(
    r"^(?:(?:now|also|just|recently)\s+)*(?:switched|changed|swapped|moved|upgraded|downgraded)\s+"
    rf"(?:(?:the|their|his|her|its|our|my)\s+)?(?P<thing>{_NOT_A_THING_FIRST}{_NOT_IN_A_THING}[a-z][\w-]*"
    rf"(?:\s+{_NOT_IN_A_THING}[a-z][\w-]*){{0,2}}?)\s+(?:to|from|over\s+to|into)\b"
)
# "was moved to the garage", "is now kept in the shed": a thing put somewhere by someone.
_PLACED = re.compile(
    r"^(?:was|were|is|are|has been|have been|got)\s+(?:now\s+)?(?:moved|taken|parked|stored|kept|towed|brought|"
    r"held|located)\s+"
    r"(?:to|at|in|into|on)\s+(?!\d|(?:next|later|earlier|the\s+(?:morning|afternoon|evening|weekend))\b|"
    r"(?:mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b)",
    re.IGNORECASE,
)
# "has a rotating facilitator", "now gets its own channel": the predicate gives the subject a thing.
_POSSESSION = re.compile(
    r"^(?:now\s+|also\s+|still\s+)*(?:has|have|had|gets?|got)\s+(?:a|an|its|their|new|own)\b", re.IGNORECASE
)
# "… as their physiotherapist", "… as the team's lead": the role a named value fills.
_AS_ROLE = re.compile(
    r"\bas\s+(?:their|his|her|its|our|my|the\s+\w+'s|the)\s+(?P<role>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)\s*$",
    re.IGNORECASE,
)
# Someone changed a thing that belongs to someone else: "raised the user's dose to 20 mg".
_ACTED_ON = re.compile(
    r"^(?:raised|lowered|increased|decreased|reduced|cut|bumped|changed|moved|switched|updated|set|doubled|halved)"
    r"\s+(?P<owner>(?:the\s+)?[\w-]+(?:\s+[\w-]+)?)'s\s+(?P<owned>[\w-]+(?:\s+(?!(?:to|from|by|on|in|at|for|with|into|onto|off)\b)[\w-]+)?)\b",
    re.IGNORECASE,
)


def _relative_noun(words: str) -> bool:
    return words.split()[-1].lower() in _PERSON_NOUNS


_MOVE_IN_PLACE = re.compile(r"\b(?:lives?|living|lived|resides?|residing|based)\b", re.IGNORECASE)


def names_a_person(entity: str) -> bool:
    """The user, the speaker, the team, or someone of theirs ("user's sister", "my manager") — by the entity alone."""
    words = entity.split()
    return entity in ("user", "speaker", "team") or (bool(words) and words[-1] in _PERSON_NOUNS)


def _person_like(entity: str, subject_words: list[str]) -> bool:
    """The user, I, we, a relative or role, or a name: every word capitalised, no article before it.

    A sentence's first word is capitalised whatever it is: "Log shipping moved to Datadog" names no one,
    "Nora moved to Leeds" and "Tom Reyes moved to Lisbon" do.
    """
    if names_a_person(entity):
        return True
    if not subject_words or subject_words[0].lower() in _DETERMINERS:
        return False
    if len(subject_words) == 1 and _activity(subject_words[0]):
        return False  # "Paging moved from Opsgenie to PagerDuty": an activity opens the fact, not a name
    return all(word[0].isupper() for word in subject_words if word[0].isalpha())


def _activity(word: str) -> bool:
    """A word in -ing the word list knows as a common noun or gerund ("paging", "billing", "hosting")."""
    low = word.lower()
    return low.endswith("ing") and lexicon().get(low, "") in ("NN", "VBG")


_SENTENCE_BREAK = re.compile(
    r"(?<=[.!?])(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\bSt\.)(?<!\bProf\.)(?<!\be\.g\.)(?<!\bi\.e\.)"
    r"\s+(?=[A-Z])|;\s+|\s+[—–]\s+"
)


def _first_clause(text: str) -> str:
    # A label before the stamp first ("Calendar: Tue 9 Sep 10:00 — ClearView windows"): the stamp then opens it.
    text = _STAMP.sub("", _PREAMBLE.sub("", _PARENTHESES.sub("", text.strip())))
    # The first sentence: a fact's later sentences give reasons ("Reason: the cluster kept …").
    # Not after a title ("Dr. Moreau") or an abbreviation ("e.g. Redis").
    first = re.split(_SENTENCE_BREAK, text, maxsplit=1)[0]
    first = _THEY_CONTRACTION.sub(lambda m: f"{m[1]} {_THEY_AUXILIARY[m[2].lower()]}", first)
    return first.strip().rstrip(".!?")


# What sets a second part beside a fact's main claim: a side clause after a comma (not a digit group's),
# a semicolon, a dash between words, or "plus". (A parenthesis qualifies what it follows: "calendar view (31 votes)".)
_SIDE_PART = re.compile(r",\s|;|\s[—–-]\s|\splus\s", re.IGNORECASE)
# A list of values ("Monday, Wednesday and Friday"): its commas join one value's items, not two parts.
_LIST_ITEM = r"[\w'’./+#-]+(?:\s[\w'’./+#-]+){0,2}"
_LIST = re.compile(rf"(?:{_LIST_ITEM},\s)+{_LIST_ITEM},?\s(?:and|or)\s")


def states_several_things(text: str) -> bool:
    """The fact states more than one thing: a second sentence or a side clause beside its main claim ("Repo uses
    ruff for lint and format, line length 100."). A label before a colon ("Emergency fund goal: 15,000 euros.")
    names what the value is of, and is not a second part; nor is a time's colon, a list or a parenthesis."""
    sentence = _strip_preamble(_PARENTHESES.sub("", text.strip())).rstrip(".!? ")
    labelled = _LABELLED.match(sentence)
    if labelled and not _SIDE_PART.search(labelled["label"]):
        sentence = labelled["value"]
    sentence = _LIST.sub(lambda listed: listed[0].replace(",", ""), sentence)
    return bool(_SENTENCE_BREAK.search(sentence) or _SIDE_PART.search(sentence) or ": " in sentence)


def _strip_preamble(sentence: str) -> str:
    for _ in range(3):
        stripped = _LEADING_TIME.sub("", _PREAMBLE.sub("", _TIME_TO.sub("", _STAMP.sub("", sentence))))
        if stripped == sentence:
            break
        sentence = stripped
    return sentence


def _subject_end(tokens: list[str]) -> int:
    """Index of the first verb-like token: where the subject noun phrase ends (0: no subject)."""
    possessed = -1  # the index of a word a possessive owns ("the user's running shoes"): a noun, not a verb
    for index, token in enumerate(tokens):
        word = token.lower().replace("’", "'")
        if index == possessed:
            continue
        if (
            index == 0
            and (word in _VERBS or word in _DECISION_VERBS or word in _CHANGED_PAST)
            and not _reads_as_noun(tokens, 0)
        ):
            return 0  # "Moved the broker …", "Switching to …", "Scratch the plan …"
        if index == 0 and len(word) > 4 and word.endswith("ed") and len(tokens) > 1 and _names_a_thing(tokens[1]):
            return 0  # "Rolled smart_inbox back …", "Paused the ramp": a past-tense note without its subject
        if index > 0 and (word in _AUXILIARIES or (word in _MODALS_AND_ADVERBS and index + 1 < len(tokens))):
            if word in _MODALS_AND_ADVERBS and word not in ("now", "still", "also", "no", "just", "currently"):
                continue
            return index
        if index > 0 and (token[0].isdigit() or token[0] in "€$£"):
            return index
        after_determiner = tokens[index - 1].lower() in _DETERMINERS if index > 0 else False
        if (
            index > 0
            and word in _VERBS
            and not token[0].isupper()
            and not after_determiner  # "The help desk", "the run book": a noun after an article
            and not _reads_as_noun(tokens, index)
        ):
            return index
        if index > 0 and _third_person_verb(tokens, index):
            return index
        if (
            index > 0
            and token.islower()
            and not after_determiner
            and _lexicon_verb(word, tokens[index - 1])
            and not _reads_as_noun(tokens, index)
        ):
            return index  # "Kafka expanded to 9 brokers", "Services communicate through NATS"
        if index > 0 and _unlisted_past_tense(tokens, index):
            return index  # "Staging database resized to 64 GB", "Webhook secret regenerated on Monday"
        if word.endswith("'s") and index + 1 < len(tokens) and tokens[index + 1].lower() in _VERBS:
            if not _possessed_noun(tokens, index + 1):
                return index + 1  # "The user's moving to Berlin": "'s" is "is"
            possessed = index + 1
    # No verb: "smart_inbox at 95%" — the subject ends at its first preposition.
    for index, token in enumerate(tokens):
        if index > 0 and token.lower() in _PREPOSITIONS | {"to", "with", "from"}:
            return index
    return len(tokens)


class LexiconError(RuntimeError):
    """The word list is missing or is not the file this code was written against."""


@lru_cache(maxsize=1)
def lexicon() -> dict[str, str]:
    """Lower-case word → its most frequent tag (Penn Treebank: NN, VBD, JJ …), read once, sha256-checked."""
    try:
        data = LEXICON.read_bytes()
    except OSError as exc:
        raise LexiconError(f"{LEXICON}: cannot be read ({exc}); rebuild it: manage.py build_lexicon") from exc
    if hashlib.sha256(data).hexdigest() != LEXICON_SHA256:
        raise LexiconError(f"{LEXICON} does not match its sha256; rebuild it: manage.py build_lexicon")
    return dict(line.split("\t", 1) for line in gzip.decompress(data).decode("utf-8").splitlines())


def _lexicon_verb(word: str, before: str) -> bool:
    """A past tense, participle or third-person form; a base form only after a plural ("services talk")."""
    tag = lexicon().get(word)
    if tag in ("VBD", "VBN", "VBZ"):
        return True
    plural = before.lower().endswith("s") and not before.lower().endswith(("ss", "us", "is", "'s"))
    return tag in ("VB", "VBP") and plural


def _unlisted_past_tense(tokens: list[str], index: int) -> bool:
    """A lower-case word the lexicon lacks, ending in "-ed", before a preposition, a figure or the sentence's end.

    The word list comes from a general corpus and lacks the verbs of operations notes ("resized", "regenerated",
    "reindexed", "backfilled"); an unknown "-ed" word after a noun, followed by where or when it went, is one.
    """
    word = tokens[index]
    if not (word.islower() and len(word) > 4 and word.endswith("ed") and word not in lexicon()):
        return False
    return _where_or_when_after(tokens, index)


def _past_tense_after_nouns(tokens: list[str]) -> bool:
    """The opening word, up to two nouns after it, then a past tense and where or when it went: the opening word
    begins a subject ("Cache flushed at 10:00", "Smoke alarm batteries replaced in February"), not an order ("Move
    completed tasks to Done": a noun follows the past form)."""
    for index in range(1, min(4, len(tokens))):
        word = tokens[index].lower()
        if word.endswith("ed") and (lexicon().get(word) in ("VBD", "VBN") or _unlisted_past_tense(tokens, index)):
            return _where_or_when_after(tokens, index)
        if word in _DETERMINERS or not lexicon().get(word, "NN").startswith("NN"):
            return False
    return False


def _where_or_when_after(tokens: list[str], index: int) -> bool:
    """After ``tokens[index]`` comes a preposition, a word of where or when it went, a figure, or nothing."""
    following = tokens[index + 1].lower() if index + 1 < len(tokens) else ""
    return not following or following in _PREPOSITIONS | _WHERE_IT_WENT or following[0].isdigit()


_CALENDAR_WORDS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june july august september october november december".split()  # noqa: E501, SIM905 - a word list reads better as text
)


def names_itself(text: str, entity: str) -> bool:
    """The fact states its subject by a proper name: "Acme Corp signed …", "Initech renewed …", "Priya reports to …".

    Every word of the entity is capitalised where the text says it; one that opens the text is no common
    English word (the lexicon: "Exports now use …" names no one); a weekday or month names a time, not a thing.
    """
    words = entity.replace("'s", "").split()
    if not words or not states_its_subject(text) or any(singular(w) in _CALENDAR_WORDS for w in words):
        return False
    found = re.search(r"\b" + r"\W+".join(re.escape(w) for w in words) + r"\b", text, re.IGNORECASE)
    if found is None:
        return False
    said = re.findall(r"[\w'’-]+", found.group(0))
    if not all(word[0].isupper() or not word[0].isalpha() for word in said):
        return False
    opens = text[: found.start()].strip(" \t\"'“‘([") == ""
    return not (opens and said[0].lower() in lexicon())


def of_many_properties(text: str, entity: str) -> bool:
    """About someone (the user, a relative, a named person) or a thing with a proper name (a client, a band): a
    subject with many properties, of which one fact names only one."""
    return names_a_person(entity) or names_itself(text, entity)


def names_apart(older_text: str, older_entity: str, newer_text: str, newer_entity: str) -> bool:
    """Two facts that each name their subject, by two names no word of which the other fact says: two things.

    "Acme Corp signed for 80 more seats; now 200 seats on Pro." / "Initech renewed for one more year at 30
    seats.": a pair reader reads one *kind* of value (seats) there, not whose, and calls it one subject
    given another value (0.99). No reading overrules two names. Where one fact names the other's subject
    too ("Halvorsen's head of IT is Ingrid Dahl." / "Ingrid Dahl left Halvorsen; …"), both may be about
    one relation between them, and the reading may decide.
    """
    if not (names_itself(older_text, older_entity) and names_itself(newer_text, newer_entity)):
        return False
    return not (_says_a_word_of(newer_text, older_entity) or _says_a_word_of(older_text, newer_entity))


# Things that come in numbered series: "Sprint 14", "Invoice 1042", "Release 4.3", "ticket #4411". The
# number names which one — unlike "Node 20" or "Postgres 16", where it is the version of one thing.
_NUMBERED_ITEM = re.compile(
    r"^\s*(?:the\s+)?(?P<item>sprint|release|invoice|order|ticket|issue|incident|bug|pr|pull request|epic|"
    r"episode|chapter|phase|milestone|build|flight|iteration|cohort|batch|case|season|round|wave|lesson|"
    r"module)\s+(?:no\.?\s*|number\s+)?#?(?P<number>[a-z]?\d+(?:[.-]\w+)*)\b"
    r"|^\s*(?P<prefix>[A-Z]{2,})-(?P<code>\d+)\b",
    re.IGNORECASE,
)


def numbered_apart(older_text: str, newer_text: str) -> bool:
    """Both facts open with one kind of numbered thing, each with its own number: two of them.

    "Sprint 14 ends on Friday." / "Sprint 15 now starts on Tuesday.", "INC-1001 …" / "INC-1002 …": the
    second sprint is no new value of the first. Only where the numbered thing is what the fact is about
    (it opens the fact); "The current sprint is Sprint 15" gives the current sprint a value.
    """
    older = _NUMBERED_ITEM.match(_strip_preamble(_first_clause(older_text)))
    newer = _NUMBERED_ITEM.match(_strip_preamble(_first_clause(newer_text)))
    if older is None or newer is None:
        return False
    (kind_a, number_a), (kind_b, number_b) = _numbered(older), _numbered(newer)
    return kind_a == kind_b and number_a != number_b


# Words joined by - . / :, a name built of parts: "ci-deployer", "db-eu-west-3", "api.example.com", "INC-2291".
IDENTIFIER = re.compile(r"\w+(?:[-./:]\w+)+")


def identifiers_extended(older_text: str, newer_text: str) -> bool:
    """One fact names an identifier the other extends by a worded part, and neither names the other's: two things.

    "ci-deployer access key rotated" / "Staging deploys with ci-deployer-staging's access key": a name built
    on another names a thing derived from it (a staging twin, a replica, a sub-account), not a new value of
    it. A part of digits only extends a version or a sequence ("3.11" / "3.11.4"), which may be a new value.
    """
    older, newer = _identifiers(older_text), _identifiers(newer_text)
    for short_side, long_side in ((older, newer), (newer, older)):
        for short in short_side - long_side:
            for long in long_side - short_side:
                rest = long[len(short) :]
                if long.startswith(short) and rest[:1] in ("-", ".", "/", ":") and re.search(r"[a-z]", rest):
                    return True
    return False


def _identifiers(text: str) -> set[str]:
    return {match.group(0).lower() for match in IDENTIFIER.finditer(text)}


def _numbered(match: re.Match[str]) -> tuple[str, str]:
    if match.group("item"):
        return singular(match.group("item").lower()), match.group("number").lower()
    return match.group("prefix").upper(), match.group("code")


def _says_a_word_of(text: str, entity: str) -> bool:
    said = {singular(w.lower()) for w in re.findall(r"[\w'’-]+", text.replace("'s", "").replace("’s", ""))}
    return any(singular(w) in said for w in entity.replace("'s", "").split())


def _names_a_thing(token: str) -> bool:
    """After an opening word in -ed: an article, a name or an identifier makes it a verb ("Registered
    non-profits" is an adjective and its noun)."""
    return token.lower() in _DETERMINERS or token[0].isupper() or any(c in token for c in "_./0123456789")


def states_its_subject(text: str) -> bool:
    """False for a note that leaves its subject out ("Moved the broker off RabbitMQ …"): its entity is a guess."""
    sentence = _strip_preamble(_first_clause(text))
    if _LABELLED.match(sentence) or _PURPOSE.match(sentence):
        return True
    tokens = _TOKEN.findall(sentence)
    return bool(tokens) and _subject_end(tokens) > 0


def subject_before_a_verb(text: str) -> bool:
    """The fact's subject is followed by a verb the reader knows ("Production alerts now go …", "Database
    backups moved …"), so its last word is a noun — not a verb read into it ("Dark mode slips to Q3")."""
    tokens = _TOKEN.findall(_strip_preamble(_first_clause(text)))
    end = _subject_end(tokens) if tokens else 0
    if not 0 < end < len(tokens):
        return False
    following = [t.lower() for t in tokens[end:]]
    if following[0] in ("now", "still", "also", "just", "currently") and len(following) > 1:
        following = following[1:]
    return following[0] in _VERBS or following[0] in _AUXILIARIES


def belonging_verb(text: str) -> str:
    """The verb with which a fact says what someone's belonging does ("meets" in "The user's book club meets
    monthly."), lower-cased; "" when the fact is not about a belonging or says what it is ("The user's car
    is a Golf.", "… is on Mondays")."""
    words = stated_subject(text)
    phrase = " ".join(words).lower().replace("’", "'")
    if "'s " not in phrase or phrase.rsplit("'s ", 1)[1].split()[-1] in _PERSON_NOUNS:
        return ""
    tokens = _TOKEN.findall(_strip_preamble(_first_clause(text)))[len(words) :]
    following = [t.lower() for t in tokens if t.lower() not in ("now", "still", "also", "usually", "just")]
    if not following:
        return ""
    if following[0] in _AUXILIARIES and len(following) > 1:
        if following[0] in ("is", "are") and lexicon().get(following[1]) == "VBG":
            return str(following[1])  # "Oskar's band is auditioning new drummers": what it is doing
        if following[0] in ("has", "have", "had") and following[1] in ("a", "an", "its", "their", "no", "another"):
            return "has"  # "Oskar's band has a gig on Friday": something it has, not what it is
    if following[0] in _AUXILIARIES:
        return ""
    return str(following[0])


def main_statement(text: str) -> str:
    """A fact's first statement, before any comma: "Repo uses ruff for lint and format" of "Repo uses ruff
    for lint and format, line length 100." — what the fact says first, not the details it lists after."""
    return re.split(r",\s", _strip_preamble(_first_clause(text)), maxsplit=1)[0]


def stated_subject(text: str) -> list[str]:
    """The words a fact names its subject with: before its verb ("The team's standup" of "The team's standup
    is at 9:30."), or its label ("Deploy window for prod: …"); none for a note that leaves its subject out."""
    sentence = _strip_preamble(_first_clause(text))
    labelled = _LABELLED.match(sentence)
    if labelled:
        return _TOKEN.findall(labelled.group("label"))  # "Deploy window for prod: Tue–Thu"
    tokens = _TOKEN.findall(sentence)
    return tokens[: _subject_end(tokens)] if tokens else []


# Verbs a decision or an instruction opens with; a note often leaves out its subject.
_DECISION_VERBS = frozenset(
    ["scratch", "pick", "choose", "adopt", "stick", "going", "went", "use", "using", "try", "trying"]
)
_DETERMINER_LIKE = _DETERMINERS | frozenset(["to", "no", "not", "every", "more", "less"])


def _possessed_noun(tokens: list[str], index: int) -> bool:
    """A word that can be a verb, after "X's", is the thing X owns where a verb or a noun follows it: "the
    user's email is …", "the user's running shoes are …". Before an article, a preposition or an adverb it is
    the verb of "X is" or "X has": "the user's moving to Berlin", "Maria's running a half marathon"."""
    if index + 1 >= len(tokens):
        return False
    following = tokens[index + 1].lower()
    if following in _AUXILIARIES:
        return True
    # Articles, prepositions and adverbs carry no noun's tag in the word list; a capitalised word is a name.
    return tokens[index + 1].islower() and lexicon().get(following, "").startswith("NN")


def _third_person_verb(tokens: list[str], index: int) -> bool:
    """ "User listens to …", "Maya loves the …": an unknown word in -s after a person, before an object."""
    word = tokens[index]
    if not word.islower() or not word.endswith("s") or word.endswith(("ss", "us", "is")) or index + 1 >= len(tokens):
        return False
    before = tokens[index - 1]
    follows = tokens[index + 1].lower()
    person = before.lower() in ("user", "he", "she", "it", "they") or (before[0].isupper() and index <= 2)
    return person and (follows in _DETERMINER_LIKE or follows in _PREPOSITIONS or follows in ("to", "with", "from"))


_PREPOSITIONS = frozenset(["of", "on", "for", "in", "at"])
# Words that say where or when a thing went after its verb ("resized to 64 GB", "rolled back", "moved off S3").
_WHERE_IT_WENT = frozenset(["to", "from", "by", "after", "before", "back", "up", "down", "off", "out", "over"])


def _reads_as_noun(tokens: list[str], index: int) -> bool:
    """ "plan" in "the Pro plan costs", "limit" in "the rate limit on the Pro plan is": a noun, not the verb."""
    following = [t.lower() for t in tokens[index + 1 :]]
    if not following:
        return False
    if index == 0 and following[0] in ("now", "still", "also", "currently"):
        return True  # "Support now 24/5": a subject, then an adverb
    if index == 0 and any(t in _AUXILIARIES for t in following[:3]):
        return True  # "Support hours are …", "Deploy windows are …": a compound noun, not an order
    if index == 0 and tokens[0].lower() in _CHANGED_PAST:
        return False  # "Moved billing alerts to Opsgenie": a note's verb, then the thing it changed
    if (
        index == 0
        and len(following) > 1
        and following[0] not in _DETERMINER_LIKE
        and lexicon().get(following[0], "NN").startswith("NN")
        and _lexicon_verb(following[1], following[0])
        and tokens[0].lower() not in _DECISION_VERBS
    ):
        return True  # "Deploy notifications moved …", "Smoke alarms replaced …": a compound noun, then its verb
    if following[0] in _AUXILIARIES:
        return True
    if index == 0 and _past_tense_after_nouns(tokens):
        return True  # "Cache flushed at 10:00", "Smoke alarm batteries replaced in February": nouns, then their verb
    if following[0] in _VERBS and following[0] not in ("to", "back"):
        # … unless a past tense takes a word in -ing as its object: "The user switched running shoes to Hoka",
        # or a verb in -s after its subject does: "The user goes running", "Priya enjoys cycling".
        tag = lexicon().get(tokens[index].lower())
        verb = tag in ("VBD", "VBN") or tokens[index].lower() in _IRREGULAR or (index > 0 and tag == "VBZ")
        return not (following[0].endswith("ing") and verb)
    if following[0] in ("now", "still", "also", "currently", "just") and len(following) > 1:
        # "API gateway logs now go to Loki": a noun, an adverb, then its verb.
        return following[1] in _VERBS or _lexicon_verb(following[1], tokens[index])
    # A month is no modal: "MOT passed on 11 May" (``following`` is lower case; the text's "May" is a month).
    return following[0] in _PREPOSITIONS and any(
        t.lower() in _AUXILIARIES and t != "May" for t in tokens[index + 2 : index + 7]
    )


def _split_owner(entity: str) -> tuple[str, str]:
    """ "maya's usual coffee" → ("maya", "usual coffee"); "user's sister" stays a person of its own."""
    if "'s " in entity:
        owner, _, owned = entity.partition("'s ")
        if owned.split()[-1] in _PERSON_NOUNS:
            return entity, ""
        return owner, owned
    match = _OF_PHRASE.match(entity)
    if match and len(match.group("attr").split()) <= 4 and _known_attribute(match.group("attr")):
        return normalise_entity(match.group("entity")), match.group("attr")
    return entity, ""


def _known_attribute(words: str) -> bool:
    return any(pattern.search(words) for pattern, _ in _ATTRIBUTE_RES)


def _attribute_from(predicate: str, owned: str) -> str:
    """The property a predicate speaks of: the lexicon, a number's unit, else what the subject owned."""
    if owned:
        return canonical_attribute(owned)
    if allergy := _allergy(predicate):
        return allergy
    for pattern, attribute in _ATTRIBUTE_RES:
        if pattern.search(predicate):
            return attribute
    if _CURRENCY.search(predicate):
        return "price"
    for match in _NUMBER_UNIT.finditer(predicate):
        unit = (match.group(1) or "").lower()
        if unit in _UNIT_ATTRIBUTES:
            return _UNIT_ATTRIBUTES[unit]
    return ""


def attribute_in(text: str) -> str:
    """The first attribute the lexicon finds anywhere in ``text`` (a query, a label), or ""."""
    return _attribute_from(text, "")


def _changed_thing(predicate_words: list[str], predicate: str) -> tuple[str, str]:
    """A note's verb and the thing it acts on: "Moved the Celery broker off RabbitMQ" is about the broker;
    "Switched the user's gym membership to …" about the user's gym membership."""
    entity, owned = _split_owner(_object_phrase(predicate_words[1:]))
    return entity, _attribute_from(predicate, owned)


def _adverbs_before(words: list[str]) -> int:
    count = 0
    while count < len(words) and words[count].lower() in ("now", "also", "just", "recently", "finally"):
        count += 1
    return count


def _changes_a_thing(words: list[str]) -> bool:
    """The words open with a verb of change and go on to a thing, not a preposition ("moved to Berlin")."""
    verb, thing = ([w.lower() for w in words[:2]] + ["", ""])[:2]
    return verb in _CHANGE_VERBS and bool(thing) and thing not in _PREPOSITIONS | {"to", "from", "back", "off"}


def _object_phrase(words: list[str]) -> str:
    phrase: list[str] = []
    while words and words[0].lower() in ("with", "to", "on", "for", "off"):
        words = words[1:]
    for word in words:
        lowered = word.lower()
        if lowered in ("to", "onto", "into", "off", "from", "in", "on", "at", "for", "with", "by", "back") and phrase:
            break
        phrase.append(word)
    return normalise_entity(" ".join(phrase))


# ---------------------------------------------------------------------------------------------
# Comparing two subjects.


@dataclass(frozen=True)
class Agreement:
    """Whether two facts' entities and attributes agree: True, False, or None when one side is unknown."""

    entity: bool | None
    attribute: bool | None

    @property
    def same(self) -> bool:
        return self.entity is True and self.attribute is True

    @property
    def different(self) -> bool:
        return self.entity is False or self.attribute is False


# Short names of common things: "the staging DB" is the staging database.
_SHORT_NAMES = {
    "db": "database",
    "k8s": "kubernetes",
    "repo": "repository",
    "env": "environment",
    "prod": "production",
    "config": "configuration",
    "docs": "documentation",
    "doc": "documentation",
    "infra": "infrastructure",
    "admin": "administrator",
    "dept": "department",
    "app": "application",
}


def _full_name(word: str) -> str:
    return _SHORT_NAMES.get(word, word)


def entities_agree(a: str, b: str) -> bool | None:
    if not a or not b:
        return None
    if a == b:
        return True
    wa, wb = [singular(_full_name(w)) for w in a.split()], [singular(_full_name(w)) for w in b.split()]
    if wa == wb:
        return True  # "book club meeting" and "book club meetings"
    short, long = (wa, wb) if len(wa) <= len(wb) else (wb, wa)
    # "acme" and "acme corp", "staging" and "the staging cluster": one names the other.
    # … or every word (two or more) of one is in the other ("max upload" and "max file upload");
    # one word inside a longer phrase is not enough ("growth" and "annual growth for new customers").
    return "'s" not in " ".join(long) and (
        long[: len(short)] == short or long[-len(short) :] == short or (len(short) > 1 and set(short) <= set(long))
    )


def singular(word: str) -> str:
    """ "meetings" → "meeting", "deliveries" → "delivery"; "status", "class", "its" stay."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "'s")):
        return word[:-1]
    return word


def attributes_agree(a: str, b: str) -> bool | None:
    if not a or not b:
        return None
    if a == b:
        return True
    canon_a, canon_b = canonical_attribute(a), canonical_attribute(b)
    if "allergy" in (canon_a, canon_b) and canon_a.endswith("allergy") and canon_b.endswith("allergy"):
        return None  # an allergy and the egg allergy: perhaps one, perhaps not
    return _one_kind_of_schedule(canon_a) == _one_kind_of_schedule(canon_b)


def _one_kind_of_schedule(attribute: str) -> str:
    """When a meeting happens is its schedule: "The weekly sync is on Mondays" (a schedule, read from the day) and
    "Weekly sync moved to Tuesday" (a meeting's schedule, read from "sync") name one property."""
    return "schedule" if attribute == "meeting schedule" else attribute


# Last words that name a property of what comes before them ("postgres version", "seat count").
_PROPERTY_HEAD_WORDS = (
    "version versions count number size level value amount total limit rate price cost name type status date "
    "time id address city town details hours schedule"
)
_PROPERTY_HEADS = frozenset(_PROPERTY_HEAD_WORDS.split())


# … and nouns that name when or how often something happens: "deploy days", "backup window".
_WHEN_HEADS = frozenset(["day", "days", "window", "windows", "frequency", "cadence"])


def names_a_property(word: str) -> bool:
    """A last word that names a property of what comes before it ("version", "price", "days"), not a thing."""
    return word.lower() in _PROPERTY_HEADS or word.lower() in _WHEN_HEADS or singular(word.lower()) in _PROPERTY_HEADS


def _qualifier_phrase(words: str) -> bool:
    """A phrase of two or more words whose property words all come before a last noun that is no property:
    "seat request form", "phone plan" — the property word qualifies that noun."""
    tokens = words.split()
    if len(tokens) < 2 or tokens[-1] in _PROPERTY_HEADS or lexicon().get(tokens[-1], "") not in ("NN", "NNS"):
        return False
    last_start = len(words) - len(tokens[-1])
    matches = [match for pattern, _ in _ATTRIBUTE_RES for match in pattern.finditer(words)]
    return bool(matches) and all(match.end() <= last_start - 1 for match in matches)


def canonical_attribute(attribute: str) -> str:
    """A key such as ``home_city``/``pro_price``/``postgres_version`` and the lexicon's names meet here."""
    words = attribute.lower().replace("_", " ")
    if _qualifier_phrase(words):
        return words  # "seat request form", "phone plan": the form and the plan, not seats or a phone
    if words.endswith(("allergy", "allergies")):
        return _allergy(words)  # "egg allergy"; an "allergy medication" is a medication
    for pattern, name in _ATTRIBUTE_RES:
        if pattern.search(words):
            return name
    last = words.split()[-1] if words.split() else ""
    for unit, name in _UNIT_ATTRIBUTES.items():
        if last == unit:
            return name
    return words


def relatives(a: str, b: str) -> bool:
    """One entity is someone or something of the other's: "user" and "user's sister"."""
    return bool(a and b) and (a.startswith(b + "'s ") or b.startswith(a + "'s "))


# Qualifiers that tell one thing's states apart, not two things: "the old car" / "the new car".
_STATE_QUALIFIERS = frozenset(
    [
        "old",
        "new",
        "current",
        "previous",
        "former",
        "existing",
        "latest",
        "next",
        "last",
        "first",
        "second",
        "main",
        "usual",
        "temporary",
    ]
)


def siblings(a: str, b: str) -> bool:
    """Two things of one kind told apart by their qualifiers: "free plan" / "team plan", "prod-eu cluster" /
    "prod-us clusters" — the same head noun, a qualifier on each side, none shared, none a mere state of a
    thing ("the old car" / "the new car" may be one slot)."""
    wa, wb = [singular(w) for w in a.split()], [singular(w) for w in b.split()]
    if len(wa) < 2 or len(wb) < 2 or wa[-1] != wb[-1] or "'s" in a + b:
        return False
    qualifiers_a, qualifiers_b = set(wa[:-1]), set(wb[:-1])
    return not (qualifiers_a & qualifiers_b) and not ((qualifiers_a | qualifiers_b) & _STATE_QUALIFIERS)


def another_thing_by_a_shared_word(older_text: str, older_entity: str, newer_text: str, newer_entity: str) -> bool:
    """Both facts name their subjects, and the newer one names another thing by a word of the older one's:
    "The billing service runs on Node 18." / "The billing dashboard moved to Grafana Cloud.", "The weekly
    newsletter goes out on Tuesdays." / "The newsletter template switched …". The heads differ, and the newer
    one's is no property ("… partitions raised to 48" after "Topic orders.v2 has 24 partitions.": the older
    fact says the word, so it names what the older fact gives a value of).
    """
    if not (states_its_subject(older_text) and states_its_subject(newer_text)):
        return False
    older_words = [singular(_full_name(w)) for w in older_entity.replace("'s", "").split()]
    newer_words = [singular(_full_name(w)) for w in newer_entity.replace("'s", "").split()]
    if not older_words or not newer_words or older_words[-1] == newer_words[-1]:
        return False
    if not set(older_words) & set(newer_words) or names_a_property(newer_words[-1]):
        return False
    return not _says_a_word_of(older_text, newer_words[-1])


def subjects_agree(a: Subject, b: Subject) -> Agreement:
    return Agreement(entities_agree(a.entity, b.entity), attributes_agree(a.attribute, b.attribute))


# ---------------------------------------------------------------------------------------------
# Who says "I". A first-person fact is about its speaker: "I work at a bank" from one side of a
# chat and "I work at a farm" from the other are two people's jobs, not one job that changed.
# The speaker is the "Name:" a line opens with ("Alice: my dog is Rex"), else the agent that
# committed it; with neither, the speaker is unknown and nothing is decided from it.

_SPEAKER_PREFIX = re.compile(r"^\s*(?P<who>[A-Za-z][\w.'’-]*(?: [\w.'’-]+)?)\s*:\s+(?P<rest>\S.*)$", re.DOTALL)
_FIRST_PERSON_SINGULAR = re.compile(r"\b(?:i|i'm|i’m|i've|i’ve|i'd|i’d|i'll|i’ll|me|my|mine|myself)\b", re.IGNORECASE)


def speaker_of(text: str, agent: str) -> str:
    """Who says the fact: a leading "Name:" before a line in the first person, else the committing agent.

    The first person may come after an opening ("Anselm: Fun fact: I now own a banjo!").
    """
    prefix = _SPEAKER_PREFIX.match(text)
    # "Update: I moved the broker" is a preamble, not someone called Update.
    if prefix and not _PREAMBLE.match(text) and _FIRST_PERSON_SINGULAR.search(prefix["rest"]):
        return prefix["who"].strip().lower()
    return agent.strip().lower()


def _named_speaker(text: str) -> re.Match[str] | None:
    """The "Name: …" a chat line opens with ("Update: …" is a preamble, not a speaker)."""
    prefix = _SPEAKER_PREFIX.match(text)
    return prefix if prefix and not _PREAMBLE.match(text) else None


def without_speaker(text: str) -> str:
    """A chat line without the "Name:" it opens with ("Saoirse: Class ran late again." → "Class ran late again.")."""
    prefix = _named_speaker(text)
    return prefix["rest"] if prefix else text


def named_speakers_differ(text_a: str, text_b: str) -> bool:
    """Both are chat lines opening with a speaker's name, and the names differ ("Ana: …" / "Ben: …")."""
    a, b = _named_speaker(text_a), _named_speaker(text_b)
    return a is not None and b is not None and a["who"].strip().lower() != b["who"].strip().lower()


def about_the_speaker(text: str, entity: str) -> bool:
    """The fact is about whoever says it: "I …", "my sister …", "my dog …" (and "Yes, I …", "Hi! I …")."""
    if not entity:
        return False
    words = entity.split()
    if entity == "speaker" or entity.startswith("speaker's ") or "i" in words:
        return True  # "yes i", "hi i": an interjection before "I" read into the subject
    return bool(re.search(rf"\bmy\s+(?:[\w-]+\s+)?{re.escape(words[-1])}\b", text, re.IGNORECASE))


def speakers_differ(text_a: str, agent_a: str, entity_a: str, text_b: str, agent_b: str, entity_b: str) -> bool:
    """Both facts are first-person statements by two different, known speakers: two subjects."""
    if not (about_the_speaker(text_a, entity_a) and about_the_speaker(text_b, entity_b)):
        return False
    speaker_a, speaker_b = speaker_of(text_a, agent_a), speaker_of(text_b, agent_b)
    return bool(speaker_a and speaker_b) and speaker_a != speaker_b
