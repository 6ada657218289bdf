"""Tier 0: deterministic rules about a pair of texts.

Cheap, explainable signals — numbers, versions and dates that differ, a negation
or polarity flip, temporal-change markers, and whether the two texts are about
the same subject at all. Each signal that fires adds a human-readable reason;
the reasons become evidence on conflict cards. The classifier (tier 1) also
uses :meth:`RuleSignals.features` as inputs, so the rules never decide alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Literal

Side = Literal["a", "b"]

_WORD = re.compile(r"[a-z0-9]+(?:[.'’][a-z0-9]+)*")

STOPWORDS = frozenset(
    """
    a an the and or but if then so of to in on at by for with from into onto over under about as is are
    was were be been being am do does did doing have has had having i me my mine we us our ours you your
    yours he him his she her hers it its they them their theirs this that these those there here what
    which who whom whose when where why how all any both each few more most other some such only own
    same than too very can will just should would could may might must shall also still yet up down out
    off again once s t d ll m o re ve y lol oh well yes yeah ok okay really like get got go going one
    thing things lot much many
    """.split()  # noqa: SIM905 - a word list reads better as text
)

NEGATORS = frozenset(
    """
    not no never none nobody nothing nowhere neither nor without cannot can't don't doesn't didn't isn't
    aren't wasn't weren't won't wouldn't shouldn't couldn't haven't hasn't hadn't mustn't ain't dont
    doesnt didnt isnt arent wasnt werent wont wouldnt cant havent hasnt n't
    """.split()  # noqa: SIM905 - a word list reads better as text
)

# Words whose presence on one side and its partner on the other usually means
# the two texts give opposite values to the same attribute.
_OPPOSITES = [
    ("love", "hate"),
    ("like", "dislike"),
    ("likes", "dislikes"),
    ("loves", "hates"),
    ("enjoy", "hate"),
    ("always", "never"),
    ("enabled", "disabled"),
    ("enable", "disable"),
    ("allowed", "forbidden"),
    ("allow", "forbid"),
    ("allowed", "banned"),
    ("true", "false"),
    ("on", "off"),
    ("open", "closed"),
    ("public", "private"),
    ("male", "female"),
    ("man", "woman"),
    ("men", "women"),
    ("boy", "girl"),
    ("husband", "wife"),
    ("married", "single"),
    ("married", "divorced"),
    ("alive", "dead"),
    ("young", "old"),
    ("older", "younger"),
    ("big", "small"),
    ("large", "small"),
    ("tall", "short"),
    ("fast", "slow"),
    ("hot", "cold"),
    ("up", "down"),
    ("in", "out"),
    ("inside", "outside"),
    ("indoors", "outdoors"),
    ("day", "night"),
    ("early", "late"),
    ("first", "last"),
    ("win", "lose"),
    ("won", "lost"),
    ("accept", "reject"),
    ("accepted", "rejected"),
    ("approved", "rejected"),
    ("pass", "fail"),
    ("passed", "failed"),
    ("success", "failure"),
    ("increase", "decrease"),
    ("increased", "decreased"),
    ("rise", "fall"),
    ("rose", "fell"),
    ("more", "less"),
    ("most", "least"),
    ("all", "none"),
    ("everyone", "nobody"),
    ("everything", "nothing"),
    ("sync", "async"),
    ("synchronous", "asynchronous"),
    ("required", "optional"),
    ("mandatory", "optional"),
    ("include", "exclude"),
    ("included", "excluded"),
    ("start", "stop"),
    ("started", "stopped"),
    ("sitting", "standing"),
    ("sits", "stands"),
    ("empty", "full"),
    ("asleep", "awake"),
    ("vegetarian", "meat"),
    ("vegan", "meat"),
    ("introvert", "extrovert"),
    ("morning", "evening"),
    ("remote", "office"),
    ("employed", "unemployed"),
    ("student", "graduated"),
    ("yes", "no"),
    ("agree", "disagree"),
    ("happy", "sad"),
    ("rich", "poor"),
    ("cheap", "expensive"),
    ("light", "dark"),
    ("wet", "dry"),
    ("black", "white"),
    ("before", "after"),
    ("above", "below"),
    ("buy", "sell"),
    ("bought", "sold"),
    ("arrive", "leave"),
    ("push", "pull"),
    ("add", "remove"),
    ("added", "removed"),
    ("deprecated", "recommended"),
    ("allowlist", "blocklist"),
    ("read", "write"),
]
OPPOSITE_OF: dict[str, frozenset[str]] = {}
for _x, _y in _OPPOSITES:
    OPPOSITE_OF[_x] = OPPOSITE_OF.get(_x, frozenset()) | {_y}
    OPPOSITE_OF[_y] = OPPOSITE_OF.get(_y, frozenset()) | {_x}


@dataclass(frozen=True)
class Habit:
    """Something a person can abstain from, and words that say they do it after all.

    "User doesn't drink alcohol" and "User's Friday wind-down is a couple of
    pints of IPA" share no words a model could hold against each other: that a
    pint is alcohol is world knowledge, written down here for a few habits
    people state about themselves.
    """

    name: str
    abstains: re.Pattern[str]
    practises: re.Pattern[str]
    # Practice words that do not count in the same text ("alcohol-free beer", "veggie burger").
    exempt: re.Pattern[str]
    # How the reason reads: "doesn't drink alcohol, yet drinks".
    clash: str
    # Abstaining said without a negation ("wants answers kept short"): a negated text does not count.
    abstains_affirmatively: bool = False


_NOT = r"(?:does\s*n[o']?t|do\s*n[o']?t|did\s*n[o']?t|never|can\s*n[o']?t|cannot|won'?t)"
_ANSWERS = r"(?:answers?|responses?|replies|explanations?|summaries)"
HABITS = (
    Habit(
        "alcohol",
        re.compile(
            rf"\b{_NOT}\s+drinks?\s+(?:any\s+)?(?:alcohol|booze)\b|\bteetotal(?:ler)?\b"
            rf"|\b{_NOT}\s+drinks?\b(?=\s*(?:at\s+all\b|[.,;:!)—–-]|$))"
        ),
        re.compile(
            r"\b(?:pints?|beers?|ipas?|lagers?|ales?|stouts?|wines?|whiske?y|bourbon|cocktails?|gin|vodka"
            r"|rum|tequila|champagne|prosecco|cider|sake|mezcal)\b"
        ),
        re.compile(r"\b(?:alcohol-free|non-alcoholic|zero-alcohol|0\.0|mocktails?)\b"),
        "doesn't drink alcohol, yet drinks",
    ),
    Habit(
        "driving",
        re.compile(
            rf"\b{_NOT}\s+(?:have\s+a\s+)?(?:driv(?:ing|er'?s)\s+licen[cs]e|drive)\b"
            r"|\bno\s+driv(?:ing|er'?s)\s+licen[cs]e\b"
        ),
        re.compile(r"\b(?:drives|drove)\b"),
        re.compile(r"\b(?:is|was|gets|got)\s+driven\b"),
        "cannot drive, yet drives",
    ),
    Habit(
        "meat",
        re.compile(rf"\b(?:vegetarian|vegan)\b|\b{_NOT}\s+eats?\s+meat\b|\bno\s+meat\b"),
        re.compile(
            r"\b(?:steaks?|burgers?|bacon|chicken|pork|beef|lamb|ham|sausages?|salami|chorizo|veal|duck"
            r"|turkey|meatballs?|brisket|ribs)\b"
        ),
        re.compile(r"\b(?:veggie|vegan|vegetarian|plant-based|meat-free|meatless|tofu|seitan|beyond|impossible)\b"),
        "eats no meat, yet eats meat",
    ),
    Habit(
        "smoking",
        re.compile(rf"\b{_NOT}\s+smoke\b|\bnon-?smoker\b"),
        re.compile(r"\b(?:smokes|cigarettes?|cigars?|vapes|vaping)\b"),
        re.compile(r"\b(?:smoke-free|nicotine-free)\b"),
        "doesn't smoke, yet smokes",
    ),
    # What assistants are told most often about their user: how long answers should be.
    Habit(
        "long answers",
        re.compile(
            rf"\b{_ANSWERS}\b[^.;]{{0,20}}\b(?:short|brief|concise|terse|succinct)\b"
            rf"|\b(?:short|brief|concise|terse|succinct)\s+{_ANSWERS}\b"
        ),
        re.compile(
            rf"\b(?:thorough|detailed|in-depth|long(?:er)?|step-by-step|comprehensive|exhaustive)\s+{_ANSWERS}\b"
            rf"|\b{_ANSWERS}\b[^.;]{{0,20}}\b(?:in\s+(?:full\s+)?detail|in\s+depth|thorough)\b"
        ),
        re.compile(r"(?!)"),
        "wants short answers, yet asks for thorough ones",
        abstains_affirmatively=True,
    ),
)
_ANY_ABSTENTION = re.compile("|".join(f"(?:{h.abstains.pattern})" for h in HABITS))
# The practice is someone else's, or only considered: "wine for Jonas", "a gift", "might try".
_NOT_ONESELF = re.compile(
    r"\bfor\s+(?:[A-Z][\w-]+|his|her|their|the\s+(?:team|guests?|party|kids?))\b|\b(?:gift|present|guests?)\b"
    r"|\b(?:might|maybe|could|would|if)\b"
)
# A habit that changed is a temporal change, not a contradiction.
_HABIT_CHANGED = re.compile(
    r"\b(?:quit|gave\s+up|stopped|started|again|anymore|any\s+more|no\s+longer|these\s+days|nowadays"
    r"|used\s+to|since)\b"
)


def habit_stances(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The habits a statement abstains from, and the habits it says its subject practises.

    Conservative: a statement that says a habit changed takes no stance, and a
    practice counts only when the statement is not negated and not about
    someone else or a possibility ("wine for Jonas", "might try a cigar").
    """
    low = text.lower()
    if _HABIT_CHANGED.search(low):
        return frozenset(), frozenset()
    negated = negation_count(tokens(text)) > 0
    abstains = frozenset(
        h.name for h in HABITS if h.abstains.search(low) and not (h.abstains_affirmatively and negated)
    )
    if abstains or _NOT_ONESELF.search(text) or negated:
        return abstains, frozenset()
    return abstains, frozenset(h.name for h in HABITS if h.practises.search(low) and not h.exempt.search(low))


def habit_broken(a_text: str, b_text: str) -> Habit | None:
    """A habit one statement abstains from and the other, about the same subject, practises.

    Both statements must open with the same subject ("User …", "User's …").
    """
    if not (_ANY_ABSTENTION.search(a_text.lower()) or _ANY_ABSTENTION.search(b_text.lower())):
        return None  # most pairs: one search per side
    opening = _opening(a_text)
    if opening is None or opening != _opening(b_text):
        return None
    abstains_a, practises_a = habit_stances(a_text)
    abstains_b, practises_b = habit_stances(b_text)
    broken = (abstains_a & practises_b) | (abstains_b & practises_a)
    return next((h for h in HABITS if h.name in broken), None)


def _opening(text: str) -> str | None:
    words = tokens(text)
    if not words:
        return None
    first = words[0]
    return first[:-2] if first.endswith("'s") else first


# Phrases that say a value changed over time (the newer statement usually carries them).
CHANGE_MARKERS = (
    "moved to",
    "moved from",
    "relocated",
    "switched",
    "switch to",
    "no longer",
    "not anymore",
    "anymore",
    "any more",
    "now",
    "nowadays",
    "these days",
    "currently",
    "at the moment",
    "since",
    "as of",
    "starting",
    "from now on",
    "changed",
    "changed to",
    "replaced",
    "replaces",
    "migrated",
    "upgraded",
    "downgraded",
    "bumped",
    "raised",
    "lowered",
    "increased",
    "decreased",
    "reduced",
    "new",
    "newly",
    "recently",
    "just",
    "became",
    "become",
    "has become",
    "instead",
    "took over",
    "handed over",
    "transferred",
    "renamed",
    "updated",
    "latest",
    "effective",
    "going forward",
    "from then on",
    "later",
    "quit",
    "retired",
    "left",
    "joined",
    # Verbs that say a thing was given another form, owner, date or size (added 2026-11-27 from general
    # English, not from a story; docs/DETECTION.md, "Words of change"). Not "cut", "dropped", "doubled",
    # "moved" alone, "went up" without the value it went to: as often an effect on something else or a
    # trend ("has cut disagreements a lot", "rents in Halifax went up again").
    "expanded",
    "scaled",
    "extended",
    "shortened",
    "went up to",
    "went down to",
    "gone up to",
    "gone down to",
    "rotated",
    "reassigned",
    "promoted",
    "rebuilt",
    "rewritten",
    "redesigned",
    "reorganised",
    "reorganized",
    "revised",
    "amended",
    "renewed",
    "rescheduled",
    "postponed",
    "delayed",
    "cancelled",
    "canceled",
    "discontinued",
    "deprecated",
    "phased out",
    "reverted",
    "rolled back",
    "swapped",
    "changed over",
    # A move with a particle: "moved back to Porto", "moved into a flat", "moved over to Linear" (2026-11-28,
    # found by the subject reader's reading of "The user moved back to Porto.", docs/DETECTION.md).
    "moved back",
    "moved back to",
    "moved into",
    "moved over to",
    # A quantity given a new value with a direction: "came down to 6.6%", "is down to 4 weeks", "rose to 48"
    # (2026-11-28, general English like "went up to" above; "down to" also matches the idiom "comes down to",
    # which only the subject guard keeps from acting).
    "came down to",
    "come down to",
    "down to",
    "dropped to",
    "fell to",
    "fallen to",
    "rose to",
    "risen to",
    "climbed to",
    "grew to",
    "shrank to",
    "cut to",
    "loosened to",
    "tightened to",
    "resized",
)
# Words of novelty announce a change only weakly: "I was thinking about a new job but honestly I'm happy
# where I am." speaks of a new job and changes none; "Kelsey's Civic got a new battery." changes no value
# the Civic had.
NOVELTY_MARKERS = frozenset(["new", "newly", "just", "recently", "latest"])
# Phrases that mark a statement as describing the past (so the other side is newer).
PAST_MARKERS = (
    "used to",
    "formerly",
    "previously",
    "was once",
    "back then",
    "in the past",
    "originally",
    "old",
    "until",
)

_CHANGE_RE = re.compile(r"\b(" + "|".join(re.escape(m) for m in sorted(CHANGE_MARKERS, key=len, reverse=True)) + r")\b")
# Not after a hyphen: "a 6-year-old cat" gives an age, not a thing of the past.
_PAST_RE = re.compile(
    r"(?<!-)\b(" + "|".join(re.escape(m) for m in sorted(PAST_MARKERS, key=len, reverse=True)) + r")\b"
)

_MONTHS = """
    january february march april may june july august september october november december jan feb mar
    apr jun jul aug sep sept oct nov dec
    """.split()  # noqa: SIM905 - a word list reads better as text
_DATE_RE = re.compile(
    r"\b(\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{2,4}|(?:"
    + "|".join(_MONTHS)
    + r")\.?\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?|\d{1,2}(?:st|nd|rd|th)?\s+(?:"
    + "|".join(_MONTHS)
    + r")(?:\s+\d{4})?|(?:"
    + "|".join(_MONTHS[:12])
    + r")\s+\d{4}|(?:19|20)\d{2})\b"
)
_MONTH_NUMBER = {name: next(n for n, full in enumerate(_MONTHS[:12], 1) if full[:3] == name[:3]) for name in _MONTHS}
_ISO_DAY = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_NAMED_DAY = re.compile(r"(?:([a-z]+)\.?\s+(\d{1,2})|(\d{1,2})(?:st|nd|rd|th)?\s+([a-z]+))\D*(\d{4})?")
_MONTH_YEAR = re.compile(r"([a-z]+)\s+(\d{4})")
# A date as the rules read it: how precise it is, and its month, day and year (0 where the text leaves it out).
DateReading = tuple[str, int, int, int]


def read_date(date: str) -> DateReading | None:
    """One of ``RuleSignals.dates_a``: "6 October 2025" and "Oct 6" are days (10, 6, 2025 / 0), "October 2025" a
    month, "2021" a year; None for a date whose month is not known ("3/4/25")."""
    if m := _ISO_DAY.fullmatch(date):
        return "day", int(m[2]), int(m[3]), int(m[1])
    if (m := _MONTH_YEAR.fullmatch(date)) and m[1] in _MONTH_NUMBER:
        return "month", _MONTH_NUMBER[m[1]], 0, int(m[2])
    if (m := _NAMED_DAY.fullmatch(date)) and (m[1] or m[4]) in _MONTH_NUMBER:
        return "day", _MONTH_NUMBER[m[1] or m[4]], int(m[2] or m[3]), int(m[5] or 0)
    if date.isdigit():
        return "year", 0, 0, int(date)
    return None


def dates_differ(dates_a: Iterable[str], dates_b: Iterable[str]) -> bool:
    """Both sides give dates as precise as each other (days and days, …), and none of one side's is the other's.

    "6 October" and "6 Oct 2025" are one day (a year left out is no other year); "since 2021" and "29 Sep" give
    no date to compare. Dates whose month is not known compare as written.
    """
    by_a, by_b = _by_precision(dates_a), _by_precision(dates_b)
    return any(
        not any(_same_date(x, y) for x in by_a[precision] for y in by_b[precision])
        for precision in by_a.keys() & by_b.keys()
    )


def _by_precision(dates: Iterable[str]) -> dict[str, list[tuple[str, DateReading | None]]]:
    """Each date with its reading, grouped by how precise it is ("day", "month", "year", or "as written")."""
    grouped: dict[str, list[tuple[str, DateReading | None]]] = {}
    for written in dates:
        reading = read_date(written)
        grouped.setdefault(reading[0] if reading else "as written", []).append((written, reading))
    return grouped


def _same_date(x: tuple[str, DateReading | None], y: tuple[str, DateReading | None]) -> bool:
    (x_text, x_reading), (y_text, y_reading) = x, y
    if x_reading is None or y_reading is None:
        return x_text == y_text
    _, *x_day, x_year = x_reading
    _, *y_day, y_year = y_reading
    return x_day == y_day and (not x_year or not y_year or x_year == y_year)


_VERSION_RE = re.compile(r"\b(?:v|version\s+|release\s+)?(\d+\.\d+(?:\.\d+)*(?:[a-z]+\d*)?)\b")
_NUMBER_RE = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)*)\s*(%|[a-z]{1,7}\b)?")
_WORD_NUMBERS = {
    w: i
    for i, w in enumerate(
        """
    zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
    sixteen seventeen eighteen nineteen twenty
    """.split()  # noqa: SIM905 - a word list reads better as text
    )
}
_WORD_NUMBERS.update({"thirty": 30, "forty": 40, "fifty": 50, "hundred": 100, "thousand": 1000, "dozen": 12})
UNITS = frozenset(
    """
    % percent ms s sec secs second seconds min mins minute minutes h hr hrs hour hours day days week
    weeks month months year years yr yrs kb mb gb tb pb k m bn b x usd eur gbp dollars euros cents km mi
    miles meters m2 kg lb lbs g rps rpm qps requests req users seats cores gib mib vcpu vcpus replicas
    workers threads pods nodes items times tokens
    """.split()  # noqa: SIM905 - a word list reads better as text
)


# What a change leaves: "moved the broker off RabbitMQ", "instead of Auth0", "from Jest to
# Vitest", "migrated billing from MySQL". A bare "from" is not a change ("logs from the API",
# "the preset change from the Mar 2 push"): it counts before "to"/"onto"/"into", or after a
# verb of change in the same clause.
_LEFT_VALUE = r"(?:(?:the|a|an|our|their|its|my|your)\s+)?(\w[\w.-]{2,})"
_LEFT_RES = (
    re.compile(r"\b(?:off|away from|instead of|replacing|scratch the|dropped)\s+" + _LEFT_VALUE, re.I),
    re.compile(r"\bfrom\s+" + _LEFT_VALUE + r"\s+(?:to|onto|into)\b", re.I),
    re.compile(
        r"\b(?:moved|moving|migrated|migrating|switched|switching|relocated|ported|upgraded|downgraded)\b"
        r"[^.;:!?]{0,60}?\bfrom\s+" + _LEFT_VALUE,
        re.I,
    ),
)

# What a change goes to: "switched the public API to GraphQL", "moving deploys onto GitHub
# Actions", "changed the headline metric to relaxed F1". A verb of change, then "to" in the same
# clause; "went to the gym" or "talked to Ana" name no verb of change and count for nothing.
_TARGET_RE = re.compile(
    r"\b(?:switched|switching|switch|moved|moving|migrated|migrating|changed|changing|ported|porting|"
    r"converted|converting|transitioned|transitioning)\b[^.;:!?]{0,60}?\b(?:to|onto|into)\s+" + _LEFT_VALUE,
    re.I,
)

# A statement that says it corrects or sharpens an earlier one: "Correction to the previous
# entry: …", "Update on cause: …", "Actually, …", "Clarifying the free allowance: …".
# The softer words count only as an opening ("ask for clarification" corrects nothing).
_CORRECTION_RE = re.compile(
    r"\b(?:correction|corrected|correcting|erratum)\b"
    r"|^\W*(?:update on|actually|clarifying|clarification|to clarify)\b",
    re.I,
)


def correction_marker(text: str) -> str | None:
    """The words with which a statement announces that it corrects an earlier one, if any."""
    match = _CORRECTION_RE.search(text)
    return match.group(0).strip(" \t:,").lower() if match else None


def change_markers(text: str) -> set[str]:
    """The words of change a statement uses ("switched", "went up to", "renewed"); not "left" after an amount,
    which is what remains ("the $400 left in the budget", "two weeks left", "nothing left"). A move with its
    object between reads "moved to" ("Moved the standup to 10:00", "moved Priya's 1:1 to Thursday")."""
    low = text.lower()
    found = {
        match.group(1)
        for match in _CHANGE_RE.finditer(low)
        if not (match.group(1) == "left" and _AMOUNT_BEFORE.search(low[: match.start()]))
    }
    if _MOVED_SOMETHING_TO.search(low):
        found.add("moved to")
    return found


# "moved the standup to", "moved the user's phone plan over to": up to four words of object, then where it went.
_MOVED_SOMETHING_TO = re.compile(
    r"\bmoved\s+(?!(?:to|from|back|into|over|in|out|on|up|down|off)\b)"  # not "moved to", "moved in": a particle
    r"(?:(?!(?:and|but|or|then|so|fast|quickly)\b)[\w'’:#./-]+\s+){1,4}?"  # the object: no second clause, no manner
    r"(?:over\s+to|back\s+to|to|into|onto)\b"
)


# What ends right before a "left" that means remaining: a figure, a figure and its unit, or a word of quantity.
_AMOUNT_BEFORE = re.compile(
    r"(?:(?:\d[\d.,]*|\b(?:" + "|".join(_WORD_NUMBERS) + r"))\s*(?:[a-z%$€£]+\s*)?"
    r"|\b(?:nothing|none|little|much|few|enough|plenty|some|any))\s*$"
)


# "also", "as well", "in addition", a clause-final "too": a statement that adds to what holds.
_ADDS = re.compile(r"\b(?:also|as well|in addition|additionally)\b|\btoo\b\s*(?:[.;,!]|$)", re.IGNORECASE)
# Verbs by which a statement moves or swaps a thing: with them, "too" compares, it does not add.
_MOVES = re.compile(r"\b(?:mov|switch|migrat|replac|chang|relocat|transferr|upgrad|downgrad)\w*", re.IGNORECASE)


# Wording by which a statement of change says some of what held before stays: "storage unchanged", "on top of
# the earlies". Not "still", "stays" or "kept": "still settling into the new place", "a 5% holdout stays off" and
# "the cluster kept losing quorum" say nothing of the older fact's other parts.
_KEEPS = re.compile(r"\b(?:unchanged|unaffected|untouched|as before|on top of)\b", re.IGNORECASE)


def keeps_part(text: str) -> bool:
    """The statement says part of what held before stays as it was."""
    return bool(_KEEPS.search(text))


def adds_without_moving(text: str) -> bool:
    """The statement adds to what holds and moves nothing: "The user now also avoids dairy." leaves
    "The user is vegetarian." standing; "SMS moved to a Sidekiq job too." is a move like the one it
    compares with."""
    return bool(_ADDS.search(text)) and not _MOVES.search(text)


def left_values(text: str) -> set[str]:
    """What a statement announces leaving: "off RabbitMQ", "from Jest to Vitest" → {"rabbitmq", "jest"}."""
    return _values(match for pattern in _LEFT_RES for match in pattern.finditer(text))


def _values(matches: Iterable[re.Match[str]]) -> set[str]:
    """The named values, lower-cased, without a sentence's closing full stop ("GraphQL." → "graphql")."""
    found = {match.group(1).lower().rstrip(".-") for match in matches}
    return {value for value in found if len(value) > 2 and value not in STOPWORDS and not value.isdigit()}


def switch_targets(text: str) -> set[str]:
    """What a statement announces changing to: "switched the API to GraphQL" → {"graphql"}."""
    return _values(_TARGET_RE.finditer(text))


def leaves_what_other_states(newer: str, older: str) -> str | None:
    """A value the newer statement says it left and the older one states (not leaves itself)."""
    stated = older.lower()
    for value in sorted(left_values(newer) - left_values(older)):
        if re.search(rf"(?<![\w.-]){re.escape(value)}(?![\w-])", stated):
            return value
    return None


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens; "don't" stays one token, as do versions such as 3.11."""
    return _WORD.findall(text.lower().replace("’", "'"))


def content_words(words: list[str]) -> set[str]:
    return set(content_words_in_order(words))


def content_words_in_order(words: list[str]) -> list[str]:
    """``content_words``, in the order the statement says them."""
    return [w for w in words if w not in STOPWORDS and w not in NEGATORS and not w.isdigit() and len(w) > 1]


def content_stems(words: list[str]) -> set[str]:
    """The content words, crudely stemmed: what two statements are compared on."""
    return {stem(w) for w in content_words(words)}


def stem(word: str) -> str:
    """A crude stem: "meetings" → "meeting", "switched" → "switch" (what statements are compared on)."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def negation_count(words: list[str]) -> int:
    return sum(1 for w in words if w in NEGATORS or w.endswith("n't"))


def _numbers(text: str) -> list[tuple[str, str]]:
    """(value, unit) pairs; dates and versions are taken out first so they are not counted twice."""
    stripped = _VERSION_RE.sub(" ", _DATE_RE.sub(" ", text.lower()))
    found = []
    for value, unit in _NUMBER_RE.findall(stripped):
        unit = unit if unit in UNITS else ""
        found.append((value.replace(",", ""), unit))
    for word in tokens(stripped):
        if word in _WORD_NUMBERS:
            found.append((str(_WORD_NUMBERS[word]), ""))
    return found


def _parse_time(value: str | date | datetime | None) -> date | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value)[:10])
    except ValueError:
        return None


@dataclass(frozen=True)
class RuleSignals:
    """What the rules found about a pair (``a`` older or unordered, ``b`` newer or unordered)."""

    overlap: float  # Jaccard of content words (stemmed)
    shared_words: tuple[str, ...]
    same_subject: bool
    frame_overlap: float  # shared leading + trailing words over the shorter text: "X is A" vs "X is B"
    negations_a: int
    negations_b: int
    negation_flip: bool
    opposite_words: tuple[tuple[str, str], ...]
    numbers_a: tuple[str, ...]
    numbers_b: tuple[str, ...]
    number_mismatch: bool
    versions_a: tuple[str, ...]
    versions_b: tuple[str, ...]
    version_mismatch: bool
    dates_a: tuple[str, ...]
    dates_b: tuple[str, ...]
    date_mismatch: bool
    change_markers_a: tuple[str, ...]
    change_markers_b: tuple[str, ...]
    past_markers_a: tuple[str, ...]
    past_markers_b: tuple[str, ...]
    has_times: bool
    days_apart: int | None  # b_time − a_time in days, when both are known
    newer: Side | None  # which side holds now, from times first, then from wording
    length_ratio: float
    words_a: int
    words_b: int
    only_a: int  # content words only in a
    only_b: int
    terminal_a: bool  # ends with sentence punctuation
    terminal_b: bool
    reasons: tuple[str, ...] = field(default=())
    # A habit one side abstains from and the other practises (see HABITS); not a classifier input.
    broken_habit: str | None = None

    @property
    def value_swap(self) -> bool:
        """Same subject, and each side has a few words of its own: "X is A" vs "X is B"."""
        return self.same_subject and 0 < self.only_a <= 3 and 0 < self.only_b <= 3

    @property
    def value_differs(self) -> bool:
        return self.number_mismatch or self.version_mismatch or self.date_mismatch

    @property
    def stated_values_differ(self) -> bool:
        """The two state different numbers, versions or dates — what makes merging them lose a value.

        Stricter than ``value_differs`` (a classifier input, fixed by the shipped weights) about
        units: a number's unit counts only when both sides give one, so "1,000 requests per
        second" and "1,000 req/s" agree while "10 GB" and "10 TB" do not.
        """
        return self.version_mismatch or self.date_mismatch or (self.same_subject and _amounts_differ(self))

    @property
    def temporal_cue(self) -> bool:
        return bool(self.change_markers_a or self.change_markers_b or self.past_markers_a or self.past_markers_b)

    @property
    def change_possible(self) -> bool:
        """Something says time passed between the two — times, or change wording; else no temporal change."""
        return self.has_times or self.temporal_cue

    def features(self) -> list[float]:
        """Numeric inputs for the classifier, in the order of :data:`FEATURE_NAMES`."""
        days = float(self.days_apart) if self.days_apart is not None else 0.0
        only_one_negated = (self.negations_a > 0) != (self.negations_b > 0)
        return [
            self.overlap,
            float(self.same_subject),
            self.frame_overlap,
            float(self.negations_a > 0),
            float(self.negations_b > 0),
            float(self.negation_flip),
            float(only_one_negated) * self.overlap,
            float(len(self.opposite_words) > 0),
            float(len(self.opposite_words) > 0) * self.overlap,
            float(bool(self.numbers_a) and bool(self.numbers_b)),
            float(self.number_mismatch),
            float(bool(self.versions_a) or bool(self.versions_b)),
            float(self.version_mismatch),
            float(bool(self.dates_a) or bool(self.dates_b)),
            float(self.date_mismatch),
            float(len(self.change_markers_a) > 0),
            float(len(self.change_markers_b) > 0),
            float(len(self.past_markers_a) > 0),
            float(len(self.past_markers_b) > 0),
            float(self.has_times),
            float(self.has_times) * self.frame_overlap,
            float(self.has_times and self.value_differs),
            min(abs(days), 3650.0) / 3650.0,
            self.length_ratio,
            min(self.words_a, 80) / 80.0,
            min(self.words_b, 80) / 80.0,
            float(self.value_differs),
            float(self.value_swap),
            float(self.has_times and self.value_swap),
            float(self.has_times and bool(self.change_markers_b)),
            float(self.has_times and self.same_subject),
            float(self.has_times and (self.negation_flip or bool(self.opposite_words))),
            min(self.only_a, 20) / 20.0,
            min(self.only_b, 20) / 20.0,
            float(self.terminal_a),
            float(self.terminal_b),
        ]


FEATURE_NAMES = (
    "overlap",
    "same_subject",
    "frame_overlap",
    "negated_a",
    "negated_b",
    "negation_flip",
    "one_negated_x_overlap",
    "opposites",
    "opposites_x_overlap",
    "numbers_both",
    "number_mismatch",
    "versions_any",
    "version_mismatch",
    "dates_any",
    "date_mismatch",
    "change_marker_a",
    "change_marker_b",
    "past_marker_a",
    "past_marker_b",
    "has_times",
    "has_times_x_frame",
    "has_times_x_value_differs",
    "days_apart",
    "length_ratio",
    "words_a",
    "words_b",
    "value_differs",
    "value_swap",
    "has_times_x_value_swap",
    "has_times_x_change_marker_b",
    "has_times_x_same_subject",
    "has_times_x_polarity",
    "only_a_words",
    "only_b_words",
    "terminal_punctuation_a",
    "terminal_punctuation_b",
)


def _subject_head(words: list[str]) -> str | None:
    """The first content word: in short factual statements, the grammatical subject ("Maria", "billing")."""
    for w in words[:4]:
        if w not in STOPWORDS and w not in NEGATORS and not w.isdigit() and len(w) > 2:
            return stem(w)
    return None


def _frame_overlap(wa: list[str], wb: list[str]) -> float:
    shorter = min(len(wa), len(wb))
    if shorter == 0:
        return 0.0
    prefix = 0
    while prefix < shorter and wa[prefix] == wb[prefix]:
        prefix += 1
    suffix = 0
    while suffix < shorter - prefix and wa[-1 - suffix] == wb[-1 - suffix]:
        suffix += 1
    return (prefix + suffix) / shorter


def _amounts(numbers: tuple[str, ...]) -> dict[str, set[str]]:
    """``("1000req", "30")`` → ``{"1000": {"req"}, "30": set()}``: each value with the units given it."""
    out: dict[str, set[str]] = {}
    for number in numbers:
        value = number.rstrip("abcdefghijklmnopqrstuvwxyz%")
        out.setdefault(value, set()).update({number[len(value) :]} - {""})
    return out


def _amounts_differ(signals: RuleSignals) -> bool:
    a, b = _amounts(signals.numbers_a), _amounts(signals.numbers_b)
    if not a or not b:
        return False
    if set(a) != set(b):
        return True
    return any(a[value] and b[value] and not a[value] & b[value] for value in a)


def _differ(xs: list[str], ys: list[str]) -> bool:
    return bool(xs) and bool(ys) and set(xs) != set(ys)


def only_novelty(signals: RuleSignals) -> bool:
    """All the newer side says of a change is that something is new or recent ("a new job", "just"), or nothing,
    and the older side says nothing of the past."""
    return not signals.past_markers_a and set(signals.change_markers_b) <= NOVELTY_MARKERS


def analyse(
    a_text: str,
    b_text: str,
    a_time: str | date | datetime | None = None,
    b_time: str | date | datetime | None = None,
) -> RuleSignals:
    """Run every rule on one pair. ``a_time``/``b_time``: when each statement became true, if known."""
    wa, wb = tokens(a_text), tokens(b_text)
    surface = {stem(w): w for w in (*reversed(wb), *reversed(wa))}  # a stem's first spelling, for reasons
    ca, cb = content_stems(wa), content_stems(wb)
    shared = ca & cb
    head_a, head_b = _subject_head(wa), _subject_head(wb)
    union = ca | cb
    overlap = len(shared) / len(union) if union else 0.0
    smaller = min(len(ca), len(cb))
    frame = _frame_overlap(wa, wb)
    # Same subject: most of the shorter text's content words recur, or the two
    # share a frame ("the rate limit is …"). Two words in common are not enough
    # for long texts that merely share vocabulary.
    same_subject = bool(shared) and (
        (smaller > 0 and len(shared) / smaller >= 0.5)
        or frame >= 0.5
        or (len(shared) >= 2 and overlap >= 0.25)
        or (head_a is not None and head_a == head_b)
    )

    neg_a, neg_b = negation_count(wa), negation_count(wb)
    negation_flip = same_subject and (neg_a % 2) != (neg_b % 2)

    set_a, set_b = set(wa), set(wb)
    opposites = tuple(
        sorted(
            (x, y)
            for x in set_a - set_b
            for y in OPPOSITE_OF.get(x, frozenset())
            if y in set_b and y not in set_a and len(x) > 2 and len(y) > 2
        )
    )

    nums_a, nums_b = _numbers(a_text), _numbers(b_text)
    vals_a = [v + u for v, u in nums_a]
    vals_b = [v + u for v, u in nums_b]
    number_mismatch = same_subject and _differ(vals_a, vals_b)
    vers_a = _VERSION_RE.findall(a_text.lower())
    vers_b = _VERSION_RE.findall(b_text.lower())
    version_mismatch = same_subject and _differ(vers_a, vers_b)
    dates_a = [d.strip() for d in _DATE_RE.findall(a_text.lower())]
    dates_b = [d.strip() for d in _DATE_RE.findall(b_text.lower())]
    date_mismatch = same_subject and _differ(dates_a, dates_b)

    low_a, low_b = a_text.lower(), b_text.lower()
    change_a = tuple(sorted(change_markers(a_text)))
    change_b = tuple(sorted(change_markers(b_text)))
    past_a = tuple(sorted(set(_PAST_RE.findall(low_a))))
    past_b = tuple(sorted(set(_PAST_RE.findall(low_b))))

    ta, tb = _parse_time(a_time), _parse_time(b_time)
    days = (tb - ta).days if ta and tb else None
    newer: Side | None = None
    if days is not None and days != 0:
        newer = "b" if days > 0 else "a"
    elif (change_b and not change_a) or (past_a and not past_b):
        newer = "b"
    elif (change_a and not change_b) or (past_b and not past_a):
        newer = "a"

    reasons: list[str] = []
    if same_subject:
        reasons.append("same subject: " + ", ".join(sorted(surface.get(w, w) for w in shared)[:6]))
    elif shared:
        reasons.append(
            "share words (" + ", ".join(sorted(surface.get(w, w) for w in shared)[:4]) + ") but not a subject"
        )
    if number_mismatch:
        reasons.append(f"numbers differ: {', '.join(vals_a)} vs {', '.join(vals_b)}")
    if version_mismatch:
        reasons.append(f"versions differ: {', '.join(vers_a)} vs {', '.join(vers_b)}")
    if date_mismatch:
        reasons.append(f"dates differ: {', '.join(dates_a)} vs {', '.join(dates_b)}")
    if negation_flip:
        negated = "the first" if neg_a % 2 else "the second"
        reasons.append(f"polarity flip: only {negated} statement is negated")
    if opposites and same_subject:
        reasons.append("opposite values: " + ", ".join(f"{x} vs {y}" for x, y in opposites[:3]))
    if change_a or change_b:
        reasons.append("change marker: " + ", ".join(f'"{m}"' for m in (*change_a, *change_b)[:4]))
    if past_a or past_b:
        reasons.append("past-tense marker: " + ", ".join(f'"{m}"' for m in (*past_a, *past_b)[:3]))
    # A habit taken up or dropped ("now drives to work") is a change, not a broken habit.
    habit = None if (change_a or change_b or past_a or past_b) else habit_broken(a_text, b_text)
    if habit:
        reasons.append(f"broken habit: {habit.clash}")
    if days is not None:
        reasons.append(f"valid from {ta} and {tb} ({abs(days)} days apart)")

    la, lb = max(len(wa), 1), max(len(wb), 1)
    return RuleSignals(
        overlap=overlap,
        shared_words=tuple(sorted(shared)),
        same_subject=same_subject,
        frame_overlap=frame,
        negations_a=neg_a,
        negations_b=neg_b,
        negation_flip=negation_flip,
        opposite_words=opposites,
        numbers_a=tuple(vals_a),
        numbers_b=tuple(vals_b),
        number_mismatch=number_mismatch,
        versions_a=tuple(vers_a),
        versions_b=tuple(vers_b),
        version_mismatch=version_mismatch,
        dates_a=tuple(dates_a),
        dates_b=tuple(dates_b),
        date_mismatch=date_mismatch,
        change_markers_a=change_a,
        change_markers_b=change_b,
        past_markers_a=past_a,
        past_markers_b=past_b,
        has_times=days is not None,
        days_apart=days,
        newer=newer,
        length_ratio=min(la, lb) / max(la, lb),
        words_a=len(wa),
        words_b=len(wb),
        only_a=len(ca - cb),
        only_b=len(cb - ca),
        terminal_a=a_text.rstrip().endswith((".", "!", "?", '"')),
        terminal_b=b_text.rstrip().endswith((".", "!", "?", '"')),
        reasons=tuple(reasons),
        broken_habit=habit.name if habit else None,
    )
