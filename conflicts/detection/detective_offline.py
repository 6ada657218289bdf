"""The narrative detective without an LLM: the same three flags from timelines.

1. **Subjects.** Facts are linked when their embeddings are close (or they fill
   the same ``key``); each fact is compared with its few most similar earlier
   facts — bounded work, never all pairs.
2. **Pairs.** The offline classifier (tier 0 rules + tier 1 model) says how the
   older fact relates to the newer one; the rules say whether the newer one
   announces a change ("moved to", "switched", "no longer").
3. **Timelines.** Along time, per subject:
   - *reversal*: A, then an announced change to B, then C saying A again with
     no announced change back — or using a thing of A's that B said ended
     ("the gas boiler was removed" … "book the gas boiler service");
   - *ambiguity* / *contradiction*: two facts at odds that are both still
     current — neither announces a change, neither was later retired — the
     latter when they are about the person the hub serves;
   - *stale*: an old fact that newer facts, months later, disagree with
     without ever retiring it — or a temporary condition with no end ("on
     parental leave") that later facts on its subject carry on past.
4. **Do not flag** (the seed's list): an announced change (the latest fact
   settles it), refinements in the same working session (minutes apart, same
   scope), facts the classifier finds compatible or only similar in wording
   (different subjects sharing words), and anything a later fact settles.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from conflicts.detection import rules
from conflicts.detection.classifier import PairInput, classify_pairs, stored_vector
from conflicts.detection.rules import RuleSignals, analyse
from conflicts.detection.verdict import Relation, Verdict
from conflicts.forgetting import StoryFact
from conflicts.story import Flag
from memories.embeddings import embed_texts
from memories.speech_acts import does_more_than_claim, is_claim, sentences
from memories.subjects import (
    attributes_agree,
    entities_agree,
    lexicon,
    named_speakers_differ,
    of_many_properties,
    singular,
    speakers_differ,
    states_its_subject,
    subject_of,
)

StoryPairClassifier = Callable[[list[tuple[StoryFact, StoryFact]]], list[Verdict]]
# What a rule calls to raise a flag: (kind, fact indexes, question, reason).
AddFlag = Callable[[str, list[int], str, str], None]

# Pairs worth classifying: this similar (less within one scope), at most this many
# earlier partners per fact.
LINK_COSINE = 0.45
SAME_SCOPE_LINK_COSINE = 0.25
PARTNERS_PER_FACT = 6
# Below this the classifier is not sure enough to raise a card on its own.
FLAG_PROBABILITY = 0.6
# Two facts this close in meaning that give different values of one measure clash.
CLASH_COSINE = 0.55
# Units of a measure two sources can disagree on (not shares: "5% of users" and
# "11% faster" measure different things).
MEASURE_UNITS = rules.UNITS - frozenset(
    [
        "%",
        "percent",
        "x",
        "k",
        "m",
        "bn",
        "b",
        "users",
        "seats",
        "items",
        "times",
        "tokens",
        "workers",
        "threads",
        "pods",
        "nodes",
        "replicas",
        "cores",
        "vcpu",
        "vcpus",
    ]
)
# A newer version named this long after the old one, unannounced, leaves the old fact stale.
VERSION_STALE_GAP = dt.timedelta(days=30)
# A later fact this close to the original statement can be a return to it.
RETURN_COSINE = 0.45
# After a switch, a later fact this close to the original (and closer to it than to the switch) restates it.
RESTATE_COSINE = 0.6
RESTATED_SHARE = 0.5
DENIAL = re.compile(r"\b(?:never|don't|do not|must not|mustn't|no longer)\s+(\w{3,})", re.I)
BOUND = re.compile(r"\b(budget|target|limit|cap|capped|max|maximum|min|minimum|at most|at least|up to|under)\b", re.I)
SAME_SESSION = dt.timedelta(hours=2)
STALE_GAP = dt.timedelta(days=90)
PERSONAL = re.compile(r"\b(user|user's|i|i'm|my|me|mine)\b", re.IGNORECASE)
# Words with which a fact announces that it replaces what came before.
ANNOUNCED = re.compile(
    r"\b(moved|moving|switched|switching|migrated|migrating|replaced|replacing|changed|changing|dropped|lifted|"
    r"upgraded|downgraded|deprecated|retired|reverted|rolled back|no longer|not any more|anymore|instead|"
    r"from now on|starting|as of|effective|was lifted|is lifted|now)\b",
    re.IGNORECASE,
)
# A plan or a visit is no return to an old state ("visiting friends in Porto next weekend" after
# "moved to Lisbon"; "planning to shut the MySQL replica down next month").
PLANNED = re.compile(r"\b(?:next|plans? to|planning|tomorrow|upcoming|visiting|visit|trip to)\b", re.IGNORECASE)
# A condition that lasts a while and then ends by itself ("on parental leave", "out of office").
TEMPORARY = re.compile(
    r"\b(?:on (?:parental|maternity|paternity|sick|medical|study|annual) leave|on sabbatical|on vacation|"
    r"on holiday|out of (?:the )?office|temporarily|until further notice)\b",
    re.IGNORECASE,
)
# ... unless the fact names its end, which lets the chronology settle it ("on vacation until 3 March").
ENDS = re.compile(r"\b(?:until|till|through|back on|back in|returns? on)\b(?! further notice)", re.IGNORECASE)
# A version written as one ("v2.1", "version 3", "release 1.4"): a bare decimal is a measurement
# ("HbA1c 6.6%", "uptime 99.82"), and a later measurement does not leave an earlier one stale.
EXPLICIT_VERSION = re.compile(r"\b(?:v|version\s+|release\s+)\d+(?:\.\d+)*\b", re.IGNORECASE)
# Two sources disagree "at the same time" when this close; further apart, the newer one is an update.
SAME_TIME = dt.timedelta(days=7)
# A value a fact states: a word with a digit ("6:30", "1,150", "B1"), a name inside the sentence
# ("Dr. Okafor", "squad Orion") or one with a capital past its first letter ("WireGuard", "CPAP").
_VALUE_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_]*(?:[.:,'’/@-][A-Za-z0-9_]+)*")
# Verbs with which a fact says a value changed, beyond ``ANNOUNCED`` ("cut to 2 projects",
# "revised to 1.5M", "handed to squad Lyra", "booth cancelled").
CHANGED = re.compile(
    r"\b(?:cut|revised|slips|slipped|handed|cancel+ed|reduced|raised|lowered|increased|decreased|"
    r"promoted|consolidated|sold|removed|discontinued|ended|stopped)\b",
    re.IGNORECASE,
)
# A change that adds to what was there keeps it ("Export now also supports Parquet").
ADDS = re.compile(r"\b(?:also|too|as well|additionally|in addition)\b", re.IGNORECASE)
# A fact that passes a value on rather than stating it: someone was told, a page or a document says it.
PASSED_ON = re.compile(
    r"\b(?:told|asked|quoted|promised|informed|emailed|says|said|website|faq|blog post|battlecard|brochure)\b",
    re.IGNORECASE,
)
# The period a figure is for: "the bill for July", "Q2 target", "in 2025".
PERIOD = re.compile(
    r"\b(?:january|february|march|april|may|june|july|august|september|october|november|december|"
    r"q[1-4]|h[12]|(?:19|20)\d\d)\b",
    re.IGNORECASE,
)
# A line in the first person: a speaker talking of themselves (or their team).
FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|my|me|mine|we|we're|we've|our|us)\b", re.IGNORECASE)
# A number and what it counts: "56 bpm", "41%", "1,000 requests".
COUNT = re.compile(r"(?<![\w.,:])(\d[\d,]*(?:\.\d+)?)\s*(%|[A-Za-z]{2,})")
# Someone close to the person a fact is about: "the partner's dental cleaning" is not the user's.
OTHER_PERSON = re.compile(
    r"\b(?:partner|wife|husband|spouse|son|daughter|sister|brother|mother|father|mum|mom|dad|parents?|"
    r"kids?|child|children|friend|colleague|boss|flatmate|roommate)(?:'s)?\b",
    re.IGNORECASE,
)
# Words with which a fact says a thing ended: it was taken away, given up or is no longer needed.
ENDING = re.compile(
    r"\b(?:removed|retired|cancel+ed|sold|deleted|decommissioned|discontinued|scrapped|sunset|sunsetted|"
    r"shut down|replaced|no longer|no more|not needed|given up|gave up|stopped)\b",
    re.IGNORECASE,
)
# Words of ending after which a thing lives on in its successor ("replaced the old car").
REPLACED = frozenset(["replaced"])
# A thing had anew: its return is announced ("Bought a new dishwasher").
ACQUIRED = re.compile(r"\b(?:bought|buying|installed|acquired)\b", re.IGNORECASE)
# A thing spoken of as past ("the old Redux code", "was on Route 53 until May").
PAST_MENTION = re.compile(
    r"\b(?:was|were|used to|old|former|formerly|previous|previously|legacy|until|ago|anymore)\b",
    re.IGNORECASE,
)
# A later mention of an ended thing this near the original in meaning can be a return to it.
ENDED_LINK_COSINE = 0.3
# The words either side of a word of ending that can name what ended ("the gas boiler was removed").
ENDED_REACH = 3
_CLAUSE_SPLIT = re.compile(r"[.;:!?()—,]+|\b(?:and|but|while|so)\b")
DETECTOR = "narrative:offline"


@dataclass
class PairView:
    older: int
    newer: int
    similarity: float
    verdict: Verdict
    signals: RuleSignals

    @property
    def at_odds(self) -> bool:
        """The newer fact disagrees with the older one (a change or a contradiction)."""
        return (
            self.verdict.relation in (Relation.TEMPORAL_CHANGE, Relation.TRUE_CONTRADICTION)
            and self.verdict.probability >= FLAG_PROBABILITY
            and self.verdict.same_subject
        )

    @property
    def agrees(self) -> bool:
        return self.verdict.relation == Relation.DUPLICATE or (
            self.verdict.relation == Relation.COMPATIBLE and self.similarity >= 0.6
        )

    announced_by_text: bool = False

    @property
    def announced(self) -> bool:
        """The newer fact says itself that something changed."""
        return self.announced_by_text or bool(self.signals.change_markers_b or self.signals.past_markers_a)


def detect(facts: list[StoryFact], *, classify: StoryPairClassifier | None = None) -> list[Flag]:
    """Flags for a story given oldest first; each fact set at most once.

    Only claims take part: questions, greetings, opinions and plans are no part of the timeline.
    """
    facts = [f for f in facts if is_claim(f.speech_act)]
    if len(facts) < 2:
        return []
    classify = classify or _default_classifier()
    vectors = _vectors(facts)
    similarity = vectors @ vectors.T
    pairs = _pairs(facts, classify, similarity)
    by_key = {(p.older, p.newer): p for p in pairs}
    flags: list[Flag] = []
    used: set[frozenset[int]] = set()

    def adder(rule: str) -> AddFlag:
        """``add`` for one rule: its flags name it in their evidence (``eval_stories`` counts flags per rule)."""

        def add(kind: str, members: list[int], question: str, reason: str) -> None:
            key = frozenset(members)
            if len(key) < 2 or any(len(key & other) >= 2 for other in used):
                return
            used.add(key)
            ordered = sorted(key)
            flags.append(
                Flag(
                    kind=kind,
                    fact_ids=[facts[i].id for i in ordered],
                    question=question,
                    detector=DETECTOR,
                    evidence={"reason": reason, "rule": rule, "facts": [facts[i].text for i in ordered]},
                    # A stale flag asks about its old fact (every stale rule puts it first in time);
                    # the others ask about the newest statement.
                    asked=facts[ordered[0] if kind == "stale" else ordered[-1]].id,
                )
            )

        return add

    _reversals(facts, pairs, by_key, adder("reversal"))
    turns = _ChatTurns(facts)
    _returns(facts, pairs, similarity, turns, adder("return"))
    _values_returned(facts, pairs, similarity, adder("value returned"))
    _ended_still_used(facts, similarity, adder("ended, used again"))
    # Older facts a later fact announced replacing: a question about them is settled.
    retired = {p.older for p in pairs if p.at_odds and p.announced}
    _disputes(facts, pairs, retired, turns, adder("dispute"))
    _value_clashes(facts, pairs, retired, adder("value clash"))
    _versions_moved_on(facts, pairs, retired, adder("version moved on"))
    _temporary_states_left_behind(facts, similarity, retired, adder("temporary state left behind"))
    return flags


def _pairs(facts: list[StoryFact], classify: StoryPairClassifier, similarity: np.ndarray) -> list[PairView]:
    chosen: list[tuple[int, int]] = []
    for newer in range(1, len(facts)):
        partners = [older for older in range(newer) if _linked(facts[older], facts[newer], similarity[older, newer])]
        partners.sort(key=lambda older: -similarity[older, newer])
        chosen += [(older, newer) for older in partners[:PARTNERS_PER_FACT]]
    # "Doesn't have a driving licence" and "drives to the office" are far apart in meaning.
    chosen += sorted(set(_habit_pairs(facts)) - set(chosen))
    # Two speakers' first-person lines ("I work at a bank" / "I work at a farm") are two people's.
    chosen = [(a, b) for a, b in chosen if not _other_speakers(facts[a], facts[b])]
    if not chosen:
        return []
    verdicts = classify([(facts[a], facts[b]) for a, b in chosen])
    return [
        PairView(
            a,
            b,
            float(similarity[a, b]),
            verdict,
            analyse(facts[a].text, facts[b].text, facts[a].at, facts[b].at),
            announced_by_text=bool(ANNOUNCED.search(facts[b].text)),
        )
        for (a, b), verdict in zip(chosen, verdicts, strict=True)
    ]


def _other_speakers(a: StoryFact, b: StoryFact) -> bool:
    return speakers_differ(a.text, a.agent, a.entity, b.text, b.agent, b.entity)


def _habit_pairs(facts: list[StoryFact]) -> list[tuple[int, int]]:
    """(older, newer) pairs where one abstains from a habit the other practises (rules.HABITS).

    A fact that abstains takes no practising stance, so the two lists never share a fact.
    """
    stances = [rules.habit_stances(f.text) for f in facts]
    abstaining = [i for i, (abstains, _) in enumerate(stances) if abstains]
    practising = [i for i, (_, practises) in enumerate(stances) if practises]
    return [
        (min(i, j), max(i, j))
        for i in abstaining
        for j in practising
        if rules.habit_broken(facts[i].text, facts[j].text)
    ]


def _linked(older: StoryFact, newer: StoryFact, similarity: float) -> bool:
    if _other_speakers(older, newer):
        return False
    if older.key and older.key == newer.key:
        return True
    if older.entity and older.attribute and (older.entity, older.attribute) == (newer.entity, newer.attribute):
        return True  # one subject's timeline, however differently worded
    threshold = SAME_SCOPE_LINK_COSINE if older.scope and older.scope == newer.scope else LINK_COSINE
    return similarity >= threshold


def _vectors(facts: list[StoryFact]) -> np.ndarray:
    missing = [i for i, f in enumerate(facts) if f.vector is None]
    if missing:
        fresh = embed_texts([facts[i].text for i in missing])
        filled = dict(zip(missing, fresh, strict=True))
    else:
        filled = {}
    return np.vstack([np.asarray(filled.get(i, f.vector), dtype=np.float32) for i, f in enumerate(facts)])


def _same_session(a: StoryFact, b: StoryFact) -> bool:
    return abs(b.at - a.at) <= SAME_SESSION and a.scope == b.scope


def _refinement(a: StoryFact, b: StoryFact) -> bool:
    """One agent refining what it just said (same session); two agents' notes minutes apart disagree.

    Lines in the first person are a conversation's turns: two speakers minutes apart each speak of
    themselves ("I ran 14 km" / "I ran 17 km"), so they stay exempt as before.
    """
    if not _same_session(a, b):
        return False
    return a.agent == b.agent or bool(FIRST_PERSON.search(a.text) or FIRST_PERSON.search(b.text))


def _same_time_other_source(a: StoryFact, b: StoryFact) -> bool:
    """Two sources speaking at about the same time: a disagreement between them is an open question.

    One source's later word, or anyone's word weeks later, is read as an update instead.
    """
    return a.agent != b.agent and abs(b.at - a.at) <= SAME_TIME


def _reversals(
    facts: list[StoryFact],
    pairs: list[PairView],
    by_key: dict[tuple[int, int], PairView],
    add: AddFlag,
) -> None:
    """A → (announced change) B → C that says A again, with no announced change back."""
    for change in pairs:
        if not (change.at_odds and change.announced) or _same_session(facts[change.older], facts[change.newer]):
            continue
        first, second = change.older, change.newer
        for later in range(second + 1, len(facts)):
            back = by_key.get((second, later))
            again = by_key.get((first, later))
            if back is None or again is None or not back.at_odds or back.announced or not again.agrees:
                continue
            add(
                "reversal",
                [first, second, later],
                f'Is it still true that "{_short(facts[later].text)}"?',
                f"changed away from this, then back without saying so (p={back.verdict.probability:.2f})",
            )


class _ChatTurns:
    """Which facts are chat turns that greet, ask or react as well as they claim
    (``speech_acts.does_more_than_claim``): read once each, only when a rule asks."""

    def __init__(self, facts: list[StoryFact]) -> None:
        self._facts = facts
        self._read: dict[int, bool] = {}

    def __call__(self, index: int) -> bool:
        if index not in self._read:
            self._read[index] = does_more_than_claim(self._facts[index].text)
        return self._read[index]


def _disputes(
    facts: list[StoryFact],
    pairs: list[PairView],
    retired: set[int],
    a_turn: _ChatTurns,
    add: AddFlag,
) -> None:
    for pair in pairs:
        older, newer = facts[pair.older], facts[pair.newer]
        if not pair.at_odds or pair.announced or _refinement(older, newer):
            continue
        if pair.older in retired or pair.newer in retired:  # a later change settles it
            continue
        if a_turn(pair.older) or a_turn(pair.newer):
            continue  # a chat turn that greets, asks or reacts as well: its topic was read, not a claim
        if _entities_apart(older, newer) and (len(sentences(older.text)) > 1 or len(sentences(newer.text)) > 1):
            continue  # a turn of several sentences, read "at odds" with a fact about another named subject
        if pair.verdict.relation == Relation.TEMPORAL_CHANGE and not _same_time_other_source(older, newer):
            continue  # read as an update: the newer fact holds, nothing to ask
        personal = bool(PERSONAL.search(older.text) and PERSONAL.search(newer.text))
        if personal:
            add(
                "contradiction",
                [pair.older, pair.newer],
                f'Is it true that "{_short(newer.text)}"?',
                f"both current, at odds ({pair.verdict.relation}, p={pair.verdict.probability:.2f})",
            )
        elif newer.at - older.at >= STALE_GAP:
            followers = [
                p.newer
                for p in pairs
                if p.older == pair.older and p.at_odds and not p.announced and p.newer > pair.older
            ]
            add(
                "stale",
                [pair.older, *followers],
                f'Is it still true that "{_short(older.text)}"?',
                "newer facts disagree with it, and nothing retired it",
            )
        else:
            add(
                "ambiguity",
                [pair.older, pair.newer],
                f'Is it "{_short(newer.text)}" that holds now (rather than "{_short(older.text)}")?',
                f"two current facts at odds ({pair.verdict.relation}, p={pair.verdict.probability:.2f})",
            )


def _returns(
    facts: list[StoryFact],
    pairs: list[PairView],
    similarity: np.ndarray,
    a_turn: _ChatTurns,
    add: AddFlag,
) -> None:
    """A, then B announces leaving it, then a later C states A again.

    B leaves A by naming what it leaves ("off RabbitMQ", "from Jest to
    Vitest"), by lifting a rule, or by switching to a value A does not name
    ("we use REST" … "we switched the public API to GraphQL"). C must not
    announce anything itself (an explicit move back is a decision, not a
    reversal) nor speak of a plan or a visit ("visiting friends in Porto next
    weekend" is no return to Porto), must be close to A in meaning, and must
    take A's side: name the value B left ("off RabbitMQ" … "consume from
    RabbitMQ"), restate a prohibition B lifted ("no deploys on Fridays" …
    "freeze is lifted" … "don't push on a Friday"), or — after a switch —
    restate A, closer to A than to B ("the public API is REST-based"). B must only claim: a chat turn that
    reacts or asks as well ("It really does. Biscuit's still there though. … he can sit and wait at doors
    now.") speaks of the conversation, and its "now" announces no change of A; nor may B's change be that
    of someone A does not name ("Rosa's best friend Edith moved to Florida" after "Sofia visits Rosa every
    Saturday").
    """
    for change in pairs:
        first, second = change.older, change.newer
        a, b = facts[first], facts[second]
        if not change.announced or _same_session(a, b) or change.similarity < LINK_COSINE:
            continue
        left = {w for w in rules.left_values(b.text) if w in a.text.lower()}
        # A prohibition lifted ("no deploys on Fridays" → "the freeze is lifted").
        flipped = change.signals.negations_a % 2 == 1 and change.signals.negations_b % 2 == 0
        switched = any(w not in a.text.lower() for w in rules.switch_targets(b.text))
        if not (left or flipped or switched) or a_turn(second):
            continue
        if _other_people(b.text) - _other_people(a.text):
            continue  # B's change is someone else's ("Rosa's best friend Edith moved …")
        if switched and not (left or flipped) and _many_properties(a) and not _shares_more_than_its_subject(a, b):
            continue  # "Tariq switched to decaf" switches one of Tariq's many properties, not A's
        new = {v for v in _values(b.text) if v not in _words(a.text)}
        for later in range(second + 1, len(facts)):
            c = facts[later]
            if _same_session(b, c) or ANNOUNCED.search(c.text) or PLANNED.search(c.text):
                continue
            if similarity[first, later] < RETURN_COSINE:
                continue
            if new & _values(c.text) or _other_people(c.text) - _other_people(a.text):
                continue  # C names what B changed to, or speaks of someone else ("the user's partner")
            says_left = any(w in c.text.lower() for w in left)
            same_polarity = flipped and rules.negation_count(rules.tokens(c.text)) % 2 == 1
            restates = (
                switched
                and similarity[first, later] >= max(RESTATE_COSINE, similarity[second, later])
                and _says_most_of(a.text, c.text)
            )
            if (says_left or same_polarity or restates) and PASSED_ON.search(c.text):
                add(
                    "stale",
                    [second, later],
                    f'Is it still true that "{_short(c.text)}"?',
                    "passes on what an announced change left",
                )
                break
            if says_left or same_polarity or restates:
                add(
                    "reversal",
                    [first, second, later],
                    f'Is it still true that "{_short(c.text)}"?',
                    "a later fact goes back to what an announced change left, without saying so",
                )
                break


def _values_returned(
    facts: list[StoryFact],
    pairs: list[PairView],
    similarity: np.ndarray,
    add: AddFlag,
) -> None:
    """A states a value, B announces a change and drops it for a new one, and a later C states A's value again.

    "Choir on Thursdays" → "Choir moved to Tuesdays" → "Thursday 19:30 for choir as every week";
    "Max upload 100 MB" → "raised to 2 GB" → "files over 100 MB are rejected". The values are what
    a fact names (``_values``: numbers, times, names); B must be close to A in meaning (``LINK_COSINE``, as
    for :func:`_returns`), name none of A's dropped values and at
    least one of its own, and C must repeat a dropped value, name none of B's new ones, say nothing
    of a change or a plan itself, be about the same entity as A (never the user's partner for the
    user), and be closer in meaning to A than to B. Where A is about someone or something named, which has many
    properties ("Marta joined the chess club at Fairview Library." / "Marta's Lichess rating rose to 1235."), B must
    be read as about A's property. Nothing here reads the pair classifier: the
    values carry the timeline, so wording the model has not seen does not matter.
    """
    for change in pairs:
        first, second = change.older, change.newer
        a, b = facts[first], facts[second]
        # B itself says it changed something (an older fact's "until" announces nothing about B), by more than a
        # word of novelty ("Kelsey's Civic got a new battery." drops no value of "Kelsey drives a Civic …").
        announced = (
            ANNOUNCED.search(b.text)
            or CHANGED.search(b.text)
            or (change.signals.change_markers_b and not rules.only_novelty(change.signals))
        )
        duplicate = change.verdict.relation == Relation.DUPLICATE
        if not announced or duplicate or _same_session(a, b) or b.at <= a.at or ADDS.search(b.text):
            continue
        if _entities_apart(a, b):
            continue  # "Emergency fund goal: 10,000" and "savings target raised to 800": two subjects
        if _many_properties(a) and attributes_agree(_attribute(a), _attribute(b)) is not True:
            continue  # "Marta joined the chess club at Fairview Library" / "Marta's Lichess rating rose to 1235"
        if _read_as_two_subjects(a, b):
            continue  # "VP Eng shortlist … invoice sent" / "the VP Eng package is now …": two things' two properties
        if change.similarity < LINK_COSINE:
            continue  # B must be about what A is about, not only of one scope (a chat's facts all share one)
        values_a, words_b = _values(a.text), _words(b.text)
        dropped = {v for v in values_a if v not in words_b} | (rules.left_values(b.text) & values_a)
        new = {v for v in _values(b.text) if v not in _words(a.text)}
        if not dropped:
            continue
        others_a = _other_people(a.text)
        for later in range(second + 1, len(facts)):
            c = facts[later]
            if c.at <= b.at or _same_session(b, c) or ANNOUNCED.search(c.text) or PLANNED.search(c.text):
                continue
            repeated = dropped & _words(c.text)
            if not repeated or new & _values(c.text):
                continue
            if not _replaced(repeated, new, a, b):
                continue  # B changed something else ("Scale allowance goes from 5,000 to 7,500" is no new Growth price)
            if all(_is_number(v) for v in repeated) and _names_apart(a.text, c.text):
                continue  # "smart_inbox on for 5%" … "smart_compose enabled for 5%": another thing's 5
            names = {v for v in repeated if not _is_number(v)}
            if names & set(_entity(c).split()) - set(_entity(a).split()):
                continue  # "MySQL backups are kept 30 days" is about the old system, not a return to it
            if similarity[first, later] < RETURN_COSINE or similarity[first, later] < similarity[second, later]:
                continue
            if _other_people(c.text) - others_a:
                continue  # "the partner's check-up with Dr. Okafor" is not the user's
            again = ", ".join(sorted(repeated))
            if PASSED_ON.search(c.text):
                # Someone was told, or a page says, the old value: stale knowledge in circulation.
                add(
                    "stale",
                    [second, later],
                    f'Is it still true that "{_short(c.text)}"?',
                    f"passes on {again}, which an announced change replaced",
                )
            else:
                add(
                    "reversal",
                    [first, second, later],
                    f'Is it still true that "{_short(c.text)}"?',
                    f"a later fact names {again} again after an announced change dropped it, without saying so",
                )
            break


def _ended_still_used(
    facts: list[StoryFact],
    similarity: np.ndarray,
    add: AddFlag,
) -> None:
    """A names a thing, B says the thing ended, and a later C uses it again as if it never had.

    B ends a thing when one of its clauses puts words A used next to a word of ending ("the gas
    boiler was removed", "Replaced Redux with Zustand", "CPAP no longer needed", "booth
    cancelled"), or when, announcing a change, it says it left it ("from Nx to Turborepo"). C
    must name every word of that thing, speak of it in the present (no "was", "old", "former",
    "until" …), announce nothing itself, name none of B's new values and be about no one else;
    A, B and C must be near in meaning (``ENDED_LINK_COSINE``). One who passes the old thing on
    ("told the client …") leaves a stale fact in circulation; anyone else goes back on B: a
    reversal. Only facts that say something ended start the search, so a run stays cheap.
    """
    ends = {i: _ending_windows(f.text) for i, f in enumerate(facts)}
    ends = {i: windows for i, windows in ends.items() if windows}
    if not ends:
        return
    words = [set(rules.tokens(f.text)) for f in facts]
    saying: dict[str, set[int]] = {}  # word → the facts that say it
    for index, said_words in enumerate(words):
        for word in said_words:
            saying.setdefault(word, set()).add(index)
    speaks_of_now = [
        not (ANNOUNCED.search(f.text) or ENDING.search(f.text) or PAST_MENTION.search(f.text)) for f in facts
    ]
    said = [rules.content_words(list(w)) for w in words]
    names = [_values(f.text) for f in facts]
    for second, windows in ends.items():
        b = facts[second]
        for first in np.flatnonzero(similarity[:second, second] >= ENDED_LINK_COSINE).tolist():
            a = facts[first]
            ended = [
                term
                for term in (
                    " ".join(w for w in window if w in (names[first] if by_name else said[first]))
                    for window, by_name in windows
                )
                if term
            ]
            if not ended or b.at <= a.at or _same_session(a, b) or _two_speakers(a, b):
                continue
            if _other_people(b.text) - _other_people(a.text):
                continue
            new = {v for v in _values(b.text) if v not in _words(a.text)}
            # Only later facts that say every word of an ended thing, near A in meaning.
            naming = set().union(*(set.intersection(*(saying.get(w, set()) for w in t.split())) for t in ended))
            for later in sorted(i for i in naming if i > second and similarity[first, i] >= ENDED_LINK_COSINE):
                c = facts[later]
                if not speaks_of_now[later] or c.at <= b.at or _same_session(b, c):
                    continue
                if _two_speakers(b, c) or _two_speakers(a, c) or ACQUIRED.search(c.text):
                    continue
                used = [term for term in ended if set(term.split()) <= words[later] and not _had_anew(term, c.text)]
                if not used or new & _values(c.text) or _other_people(c.text) - _other_people(a.text):
                    continue
                passed_on = bool(PASSED_ON.search(c.text))
                add(
                    "stale" if passed_on else "reversal",
                    [second, later] if passed_on else [first, second, later],
                    f'Is it still true that "{_short(c.text)}"?',
                    f"{'passes on' if passed_on else 'uses again'} {used[0]}, which a later fact said had ended",
                )
                break


def _had_anew(term: str, text: str) -> bool:
    """The text speaks of a new one of the thing ("a new dishwasher", "another Trek bike")."""
    first = re.escape(term.split()[0])
    return bool(re.search(rf"\b(?:new|another)\s+(?:\w+\s+)?{first}\b", text, re.IGNORECASE))


def _two_speakers(a: StoryFact, b: StoryFact) -> bool:
    """Two people speak: each in the first person, or as two named chat speakers ("Ana: …" / "Ben: …")."""
    return _other_speakers(a, b) or named_speakers_differ(a.text, b.text)


def _ending_windows(text: str) -> list[tuple[list[str], bool]]:
    """The words that can name what a statement says ended, and whether only a name counts among them.

    Up to ``ENDED_REACH`` nouns either side of each word of ending in its clause ("the gas boiler was
    removed"); a thing replaced lives on in its successor ("replaced the old car" — by a car), so
    there only a name counts ("Replaced Redux with Zustand"). And, when the statement announces a
    change, each value it says it left ("from Nx to Turborepo"). A question announces nothing ("Are you
    thinking about replacing Beans?").
    """
    text = " ".join(part for part in sentences(text) if not part.endswith("?"))  # a question ends nothing
    windows = []
    for clause in _CLAUSE_SPLIT.split(text):
        for ending in ENDING.finditer(clause):
            before = _nouns(_what_undergoes(clause[: ending.start()], clause[ending.end() :], ending.group(0)))
            before = before[-ENDED_REACH:]
            after = _nouns(clause[ending.end() :])[:ENDED_REACH]
            windows.append((list(dict.fromkeys(before + after)), ending.group(0).lower() in REPLACED))
    if ANNOUNCED.search(text) or rules.change_markers(text):
        windows += [([value], False) for value in sorted(rules.left_values(text))]
    return [(words, by_name) for words, by_name in windows if words]


# "Biscuit had a bad tooth removed", "got the cast taken off": what ended is what was had done, not who had it.
_CAUSATIVE = re.compile(r"\b(?:had|has|have|having|got|gets|get|getting)\b", re.IGNORECASE)
# Words of ending that are no verb with an object of their own ("CPAP no longer needed").
_NO_OBJECT = frozenset(["no longer", "no more", "not needed"])


def _what_undergoes(before: str, after: str, ending: str) -> str:
    """The words before a word of ending that can name what ended: none where the word is a verb with its
    object after it ("Kelsey sold her old bike": Kelsey did the selling), only those after "had" in "had X
    removed"; else all of them ("the gas boiler was removed")."""
    known = lexicon()
    following = rules.tokens(after)[:1]
    if (
        ending.lower() not in _NO_OBJECT
        and following
        and (
            known.get(following[0], "") in ("DT", "PRP$")
            or (after.lstrip()[:1].isupper() and following[0] not in known)
        )
    ):
        return ""
    causative = list(_CAUSATIVE.finditer(before))
    return before[causative[-1].end() :] if causative else before


def _nouns(text: str) -> list[str]:
    """The content words that can be part of a thing's name: nouns, and words the lexicon does not know
    ("CPAP", "SaaStr"); never an adverb or an adjective ("finally", "old")."""
    known = lexicon()
    return [w for w in rules.content_words_in_order(rules.tokens(text)) if known.get(w, "NN").startswith("NN")]


def _values(text: str) -> set[str]:
    """The values a fact names, lower-cased: numbers and times, and names ("Okafor", "WireGuard").

    A capitalised word counts only inside a sentence (an opening "Wakes" is no name) — unless it
    has another capital ("CPAP", "PgBouncer"), a digit or an underscore ("smart_inbox"); every
    word inside backticks counts (a command). Commas in numbers are dropped ("1,150").
    """
    found = set()
    for match in _VALUE_TOKEN.finditer(text):
        token = match.group(0).rstrip(".:,")
        before = text[: match.start()].rstrip()
        sentence_start = not before or (before[-1] in '.!?:;—-("' and not before.endswith("Dr."))
        has_digit = any(ch.isdigit() for ch in token)
        inner_capital = any(ch.isupper() for ch in token[1:]) or "_" in token
        if has_digit or inner_capital or (token[:1].isupper() and not sentence_start):
            found.add(token.lower().replace(",", ""))
    for span in re.findall(r"`([^`]+)`", text):  # a command or an identifier: every word of it
        found |= _words(span)
    return found


def _entities_apart(a: StoryFact, b: StoryFact) -> bool:
    """Both facts name what they are about, in words that share nothing ("emergency fund goal", "savings target").

    A note that leaves its subject out ("Wakes at 6:30 …") has only a guessed entity: no evidence either way.
    """
    if not (states_its_subject(a.text) and states_its_subject(b.text)):
        return False
    # One word in two numbers is one word ("backup retention" / "database backups").
    words_a = {singular(w) for w in _entity(a).split() if w not in rules.STOPWORDS}
    words_b = {singular(w) for w in _entity(b).split() if w not in rules.STOPWORDS}
    return bool(words_a) and bool(words_b) and not words_a & words_b


def _read_as_two_subjects(a: StoryFact, b: StoryFact) -> bool:
    """The subject reader reads the two facts as two things (their entities do not agree) and as two properties
    (both attributes known, and different): B changes something else, whatever words the entities share."""
    return entities_agree(_entity(a), _entity(b)) is False and attributes_agree(_attribute(a), _attribute(b)) is False


def _many_properties(fact: StoryFact) -> bool:
    """The fact is about someone (the user, a relative, a named person) or something it names by a proper name
    (a client, a band): a subject with many properties, of which a fact about it names only one."""
    return of_many_properties(fact.text, _entity(fact))


def _shares_more_than_its_subject(a: StoryFact, b: StoryFact) -> bool:
    """B names something of A's besides A's subject: "Tariq is training for a 10k race" and "Tariq switched to
    decaf" share only Tariq; "We use REST for the public API" and "We switched the public API to GraphQL" share
    the API. A possessive is its owner ("The Loose Teeth's rehearsals" names the band, not more of it)."""

    def owned(words: list[str]) -> list[str]:
        return [w.removesuffix("'s") for w in words]

    subject = set(owned(rules.tokens(_entity(a))))
    said = {w for w in rules.content_words(owned(rules.tokens(b.text))) if w not in subject}
    return bool(said & set(owned(rules.tokens(a.text))))


def _entity(fact: StoryFact) -> str:
    """What the fact is about: as stored, else read from its text (a story fact not yet embedded)."""
    return fact.entity or subject_of(fact.text).entity


def _attribute(fact: StoryFact) -> str:
    """Which property of it the fact speaks of: as stored, else read from its text (a fact not yet embedded)."""
    return fact.attribute if fact.entity else subject_of(fact.text).attribute


def _replaced(repeated: set[str], new: set[str], a: StoryFact, b: StoryFact) -> bool:
    """B put something of the same kind in place of a repeated value (a number for a number, a name for a
    name) — or, naming no new value ("dbt runs hourly now"), B is plainly about what A is about."""
    if not new:
        return entities_agree(_entity(a), _entity(b)) is True
    return any(_is_number(v) == _is_number(n) for v in repeated for n in new)


def _is_number(value: str) -> bool:
    return bool(re.fullmatch(r"[\d.:/]+[a-z%]{0,2}", value))


def _names_apart(a: str, c: str) -> bool:
    """Each fact names something the other does not name at all: they are about different things."""
    names_a = {v for v in _values(a) if not _is_number(v)}
    names_c = {v for v in _values(c) if not _is_number(v)}
    return bool(names_a - _words(c)) and bool(names_c - _words(a))


def _periods_differ(a: str, b: str) -> bool:
    """Both facts name the period they speak of (a month, a quarter, a year), and no period is shared."""
    periods_a = {m.group(0).lower() for m in PERIOD.finditer(a)}
    periods_b = {m.group(0).lower() for m in PERIOD.finditer(b)}
    return bool(periods_a) and bool(periods_b) and not periods_a & periods_b


def _other_people(text: str) -> set[str]:
    return {m.group(0).lower().removesuffix("'s") for m in OTHER_PERSON.finditer(text)}


def _words(text: str) -> set[str]:
    """Every token of a fact, lower-cased, for "does it name this value" (commas in numbers dropped); a
    possessive names its owner too ("Marcus's wedding venue" names Marcus)."""
    words = {m.group(0).rstrip(".:,").lower().replace(",", "") for m in _VALUE_TOKEN.finditer(text)}
    return words | {w.removesuffix("'s").removesuffix("’s") for w in words}


def _value_clashes(
    facts: list[StoryFact],
    pairs: list[PairView],
    retired: set[int],
    add: AddFlag,
) -> None:
    """Two sources state different values of the same measure, and nothing says one replaced the other.

    "Backups are kept 30 days" (ops) vs "backups are kept for 14 days" (compliance):
    the same unit with different numbers, or different dates, in two facts close in
    meaning, from different agents (one agent restating a value is a progression),
    neither announcing a change, neither retired later.
    """
    for pair in pairs:
        older, newer = facts[pair.older], facts[pair.newer]
        close = pair.similarity >= CLASH_COSINE or (pair.signals.same_subject and pair.similarity >= LINK_COSINE)
        if not close or pair.announced or older.agent == newer.agent or _refinement(older, newer):
            continue
        if _periods_differ(older.text, newer.text):
            continue  # "the bill for July" and "the August invoice" are two bills
        if PLANNED.search(older.text) or PLANNED.search(newer.text):
            continue  # "next Sunday we could try 15 km" states no current value
        if _other_people(older.text) != _other_people(newer.text):
            continue  # "Brightpath's sister company … 12,000 USD" is not Brightpath's deal
        if pair.older in retired or pair.newer in retired or ANNOUNCED.search(older.text):
            continue
        if bool(BOUND.search(older.text)) != bool(BOUND.search(newer.text)):
            continue  # a budget or a limit and a measurement do not clash; two limits do
        measure = _clashing_measure(pair.signals)
        if measure is None and _same_time_other_source(older, newer) and _same_thing(older, newer):
            measure = _clashing_count(older.text, newer.text)
        if measure is None and pair.similarity >= CLASH_COSINE:
            measure = _clashing_instruction(older.text, newer.text)
        if measure is None:
            continue
        add(
            "ambiguity",
            [pair.older, pair.newer],
            f'Which holds now: "{_short(older.text, 80)}" or "{_short(newer.text, 80)}"?',
            f"two current sources give different {measure} (cosine {pair.similarity:.2f})",
        )


def _versions_moved_on(
    facts: list[StoryFact],
    pairs: list[PairView],
    retired: set[int],
    add: AddFlag,
) -> None:
    """Stale: a fact names one version of something; weeks later another fact uses a newer one, unannounced.

    "Annotators follow guidelines v1.3" … "annotators were trained on the v2.1
    guidelines": nothing retired v1.3, so the old fact still reads as current.
    An announced upgrade ("upgraded 25 -> 26") is a change, settled at ingestion.
    """
    for pair in pairs:
        older, newer = facts[pair.older], facts[pair.newer]
        if not pair.signals.version_mismatch or pair.announced or pair.older in retired:
            continue
        if not (EXPLICIT_VERSION.search(older.text) and EXPLICIT_VERSION.search(newer.text)):
            continue  # "HbA1c 7.4%" … "6.6%" are measurements, not versions
        if newer.at - older.at < VERSION_STALE_GAP or ANNOUNCED.search(newer.text):
            continue
        add(
            "stale",
            [pair.older, pair.newer],
            f'Is it still true that "{_short(older.text)}"?',
            f"a later fact uses another version ({', '.join(pair.signals.versions_b)}) and nothing retired this one",
        )


def _temporary_states_left_behind(
    facts: list[StoryFact],
    similarity: np.ndarray,
    retired: set[int],
    add: AddFlag,
) -> None:
    """Stale: a temporary condition with no end ("User is on parental leave — no work calls"), and
    months later its scope carries on as if it were over (meetings, workshops), nothing retiring it.

    The later facts share the fact's scope and come at least ``STALE_GAP`` after it. A condition
    that names its end ("on vacation until 3 March") is left to the chronology, and so is one that
    any later fact speaks to — close in meaning (cosine ≥ ``LINK_COSINE``) or naming a temporary
    condition itself: "Marta is back and running reviews again" ends it, "still on leave" keeps it.
    """
    for index, fact in enumerate(facts):
        if index in retired or not fact.scope or not TEMPORARY.search(fact.text) or ENDS.search(fact.text):
            continue
        after = range(index + 1, len(facts))
        if any(similarity[index, j] >= LINK_COSINE or TEMPORARY.search(facts[j].text) for j in after):
            continue
        later = [j for j in after if facts[j].scope == fact.scope and facts[j].at - fact.at >= STALE_GAP]
        if not later:
            continue
        add(
            "stale",
            [index, *later[:PARTNERS_PER_FACT]],
            f'Is it still true that "{_short(fact.text)}"?',
            f"a temporary condition with no end, {(facts[later[-1]].at - fact.at).days} days old; "
            "later facts on its subject carry on without it",
        )


def _says_most_of(original: str, later: str) -> bool:
    """The later statement repeats at least half of the original's content words: it restates it.

    "The public API is REST-based" repeats "public", "API", "REST" of "we use REST for the public
    API"; "MySQL backups for billing are kept 30 days" shares only "billing" and "MySQL" with
    "the billing service stores data in MySQL" — it speaks of the old system, not for it.
    """
    words = rules.content_stems(rules.tokens(original))
    return bool(words) and len(words & rules.content_stems(rules.tokens(later))) >= RESTATED_SHARE * len(words)


def _clashing_measure(signals: RuleSignals) -> str | None:
    """The measure two facts give different values for: a shared unit, or dates."""
    units_a = {unit for _, unit in _split_numbers(signals.numbers_a) if unit in MEASURE_UNITS}
    units_b = {unit for _, unit in _split_numbers(signals.numbers_b) if unit in MEASURE_UNITS}
    for unit in sorted(units_a & units_b):
        values_a = {value for value, u in _split_numbers(signals.numbers_a) if u == unit}
        values_b = {value for value, u in _split_numbers(signals.numbers_b) if u == unit}
        if not values_a & values_b:
            return f"{unit} values"
    if rules.dates_differ(signals.dates_a, signals.dates_b):
        return "dates"  # days against days, years against years: "since 2021" gives no day to clash with
    return None


def _same_thing(a: StoryFact, b: StoryFact) -> bool:
    """Both facts name what they are about, and it is the same ("resting heart rate"), or one names the other."""
    if a.agent != b.agent and (FIRST_PERSON.search(a.text) or FIRST_PERSON.search(b.text)):
        return False  # two speakers' "I" are two people
    return entities_agree(_entity(a), _entity(b)) is True


def _clashing_count(a: str, b: str) -> str | None:
    """Numbers of the same word ("56 bpm" / "61 bpm", "41%" / "36%", "1,000 requests" / "600 requests")
    that differ: what ``_clashing_measure`` reads for units it knows, for any word after a number."""
    counts_a, counts_b = _counts(a), _counts(b)
    for word in sorted(set(counts_a) & set(counts_b)):
        if not counts_a[word] & counts_b[word]:
            return f"{word} values"
    return None


def _counts(text: str) -> dict[str, set[str]]:
    """``{"bpm": {"56"}}``: each number, by the word (or "%") right after it."""
    counts: dict[str, set[str]] = {}
    for number, word in COUNT.findall(text):
        counts.setdefault(word.lower(), set()).add(number.replace(",", ""))
    return counts


def _clashing_instruction(a: str, b: str) -> str | None:
    """One says "never X" and the other says "X": a word negated on one side, affirmed on the other."""
    for negated_side, other in ((a, b), (b, a)):
        denied = _denied_words(negated_side)
        affirmed = set(rules.content_words(rules.tokens(other))) - _denied_words(other)
        both = sorted(denied & affirmed)
        if both:
            return f'instructions ("{both[0]}" denied on one side, asked for on the other)'
    return None


def _denied_words(text: str) -> set[str]:
    """The word right after a negator: "never commit" → commit, "don't push" → push."""
    return {match.group(1).lower() for match in DENIAL.finditer(text)}


def _split_numbers(numbers: tuple[str, ...]) -> list[tuple[str, str]]:
    """``'30days'`` → ``('30', 'days')``."""
    split = []
    for number in numbers:
        digits = number.rstrip("abcdefghijklmnopqrstuvwxyz%")
        split.append((digits, number[len(digits) :]))
    return split


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split()).rstrip(".")
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def _default_classifier() -> StoryPairClassifier:
    return classify_story_pairs


def classify_story_pairs(pairs: list[tuple[StoryFact, StoryFact]]) -> list[Verdict]:
    """The shipped classifier on story facts (their stored embeddings reused where it can read them)."""

    def vector(fact: StoryFact) -> np.ndarray | None:
        return stored_vector(fact.vector, fact.embedding_model)

    inputs = [PairInput(a.text, b.text, a.at, b.at, vector(a), vector(b)) for a, b in pairs]
    return [prediction.verdict() for prediction in classify_pairs(inputs)]
