"""Tier 1: the trained pair classifier (numpy inference over shipped weights).

Input: two texts (``a`` older or unordered, ``b`` newer or unordered), optional
times when each became true, optional precomputed embeddings. Output: one of
``temporal_change | true_contradiction | duplicate | compatible`` with
temperature-calibrated probabilities, which side is current for a temporal
change, and the tier-0 rule reasons as evidence.

Two readings: a numpy network over the facts' MiniLM vectors and the rule
features decides every pair; where it sees a possible duplicate, the
cross-encoder (``cross_encoder.py``) reads the two texts together and its
probabilities are mixed in (``cross_encoder.second_reading``). In the
worker's check a third: the slot reader (the cross-encoder fine-tuned with the
slot pairs too) reads dated pairs for one subject given another value
(``read_dated_pairs``, ``_one_slot_change``).

The weights (``weights/detector.npz``, metadata in ``detector.json``) are made
by ``python manage.py train_detector``, the cross-encoder's by
``python manage.py train_cross_encoder``; both load once per process, lazily.
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from conflicts.detection import cross_encoder, rules
from conflicts.detection.candidates import memory_cosine, one_thing
from conflicts.detection.features import build_matrix
from conflicts.detection.network import LABELS, RELATION_OF_LABEL, Model, apply_rules, load_model, long_pairs
from conflicts.detection.verdict import (
    ANNOUNCED_WITHIN_SUBJECT,
    CORRECTION,
    LEFT_BEHIND,
    OPPOSITE_POLARITY,
    SLOT_READER,
    Relation,
    Verdict,
)
from memories import embeddings
from memories.speech_acts import does_more_than_claim
from memories.subjects import (
    another_thing_by_a_shared_word,
    identifiers_extended,
    main_statement,
    named_speakers_differ,
    names_a_property,
    names_apart,
    numbered_apart,
    of_many_properties,
    relatives,
    siblings,
    singular,
    speakers_differ,
    stated_subject,
    states_its_subject,
    subject_before_a_verb,
    subjects_agree,
    without_speaker,
)

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from memories.models import Memory

WEIGHTS_PATH = Path(__file__).parent / "weights" / "detector.npz"
TIER = "classifier"
# A verdict the cross-encoder had a say in: Insights counts its precision apart.
TIER_READ = "cross_encoder"
# Facts that share no subject words (by the rules) are only the same subject when
# the model is this sure they conflict ("I play soccer" / "I do not like sports");
# below it, long texts that merely share vocabulary never invalidate each other.
SURE_WITHOUT_SHARED_WORDS = 0.8
# "Moved X off A" after "X is A": how sure the rule is, and how close the facts must be
# when the rules see no shared subject.
LEFT_BEHIND_PROBABILITY = 0.9
# A later fact about the same entity and attribute that says it changed.
SUBJECT_CHANGE_PROBABILITY = 0.9
LEFT_BEHIND_COSINE = 0.45
# "Correction: …" replaces an earlier fact only on the same subject: shared subject
# words by the rules, or this close in meaning.
CORRECTED_COSINE = 0.6
When = str | date | datetime | None
# Facts that became true less than this apart carry no news of a change in the world.
SAME_DAY = timedelta(days=1)
# The slot reader (the cross-encoder fine-tuned with the slot pairs as well) reads a dated pair as one
# subject given another value from this probability of "update" plus "contradiction": reading both texts
# as one input, it gives those to a pair mostly where both speak of one thing (dev sets: 27 of 28 fresh
# probe changes, 1 of 20 pairs of two subjects sharing words; docs/DETECTION.md, "The slot reader").
ONE_SLOT_CHANGE = 0.6
# … and where nothing announces the change, from this probability of "update" alone, for facts of one
# source about one entity (``_restated_by_its_source``).
UNANNOUNCED_UPDATE = 0.9
# Where a word of novelty is all that announces a change (``rules.only_novelty``), the slot reading must
# be this sure.
NOVELTY_ONLY_CHANGE = 0.9
# Recall's subject lookups ask the slot reader about a pair only where the lookup reader gives it at least
# this chance of another value, and less than ``ONE_SLOT_CHANGE`` (``another_value_readings``).
LOOKUP_READER_UNSURE = 0.1


@dataclass(frozen=True)
class PairInput:
    a_text: str
    b_text: str
    a_time: When = None
    b_time: When = None
    a_embedding: NDArray[np.float32] | None = None
    b_embedding: NDArray[np.float32] | None = None


@dataclass(frozen=True)
class Prediction:
    relation: Relation
    probability: float
    probabilities: dict[str, float]  # by relation value; sums to 1
    current: Literal["a", "b"] | None  # the side that holds now, for a temporal change
    signals: rules.RuleSignals
    read_together: bool = False  # the cross-encoder read this pair too
    # The cross-encoder's own probabilities (``LABELS`` order) where it read the pair, before any mixing.
    reading: tuple[float, ...] | None = None
    # The slot reader's probabilities where it read a dated pair (``read_dated_pairs``).
    slot_reading: tuple[float, ...] | None = None

    @property
    def reasons(self) -> tuple[str, ...]:
        return self.signals.reasons

    @property
    def announced(self) -> bool:
        """The current side says itself that it replaces the other."""
        s = self.signals
        if self.current == "a":
            return bool(s.change_markers_a or s.past_markers_b)
        return bool(s.change_markers_b or s.past_markers_a)

    def verdict(self) -> Verdict:
        return Verdict(
            relation=self.relation,
            probability=self.probability,
            tier=TIER_READ if self.read_together else TIER,
            current=self.current,
            same_subject=self.signals.same_subject
            or (self.relation != Relation.COMPATIBLE and self.probability >= SURE_WITHOUT_SHARED_WORDS),
            announced=self.announced,
            values_differ=self.signals.stated_values_differ,
            reasons=self.reasons,
            probabilities=dict(self.probabilities),
        )


@dataclass(frozen=True)
class LoadedDetector:
    model: Model
    metadata: dict[str, Any]
    embeddings: bool
    hashed: bool
    # The embedding model the classifier was trained on: its inputs must come from it.
    embedder: str


@lru_cache(maxsize=4)
def load_detector(path: Path = WEIGHTS_PATH) -> LoadedDetector:
    """The shipped model, read once per process."""
    metadata = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    config = metadata.get("config", {})
    return LoadedDetector(
        model=load_model(path),
        metadata=metadata,
        embeddings=bool(config.get("embeddings", True)),
        hashed=bool(config.get("hashed", True)),
        embedder=str(metadata["embedder"]),
    )


def embeddings_for(pairs: Sequence[PairInput], embedder: str) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """Given embeddings where supplied; the rest embedded by ``embedder`` in one batch (each distinct text once)."""
    missing: dict[str, int] = {}
    for p in pairs:
        for text, given in ((p.a_text, p.a_embedding), (p.b_text, p.b_embedding)):
            if given is None and text not in missing:
                missing[text] = len(missing)
    vectors: NDArray[np.float32] = np.zeros((0, 384), dtype=np.float32)
    if missing:
        vectors = embeddings.embedder_named(embedder).embed(list(missing))
    ua = np.stack([p.a_embedding if p.a_embedding is not None else vectors[missing[p.a_text]] for p in pairs])
    ub = np.stack([p.b_embedding if p.b_embedding is not None else vectors[missing[p.b_text]] for p in pairs])
    return ua.astype(np.float32), ub.astype(np.float32)


def classify_pairs(
    pairs: Sequence[PairInput],
    *,
    weights: Path = WEIGHTS_PATH,
    reader: Path | None = cross_encoder.WEIGHTS_PATH,
    most_read: int | None = None,
) -> list[Prediction]:
    """Classify a batch of pairs (batching makes embedding much cheaper per pair).

    ``reader`` is the cross-encoder consulted on possible duplicates; ``None`` leaves the network alone.
    ``most_read`` caps how many pairs it reads (the likeliest duplicates); ``None``, every possible one.
    """
    if not pairs:
        return []
    detector = load_detector(weights)
    signals = [rules.analyse(p.a_text, p.b_text, p.a_time, p.b_time) for p in pairs]
    ua, ub = embeddings_for(pairs, detector.embedder)
    x = build_matrix(
        [p.a_text for p in pairs],
        [p.b_text for p in pairs],
        signals,
        ua,
        ub,
        embeddings=detector.embeddings,
        hashed=detector.hashed,
    )
    network = detector.model.probabilities(x, long_pairs([p.a_text for p in pairs], [p.b_text for p in pairs]))
    read = np.zeros(len(pairs), dtype=bool)
    readings: dict[int, tuple[float, ...]] = {}
    if reader is not None:
        cross = cross_encoder.load_cross_encoder(reader)

        def read_rows(rows: NDArray[np.int64]) -> NDArray[np.float32]:
            probabilities = cross.probabilities([(pairs[i].a_text, pairs[i].b_text) for i in rows])
            readings.update((int(i), tuple(map(float, row))) for i, row in zip(rows, probabilities, strict=True))
            return probabilities

        read, network = cross_encoder.read_again(network, read_rows, signals, most=most_read)
    probs = apply_rules(network, signals).astype(np.float64)
    probs /= probs.sum(axis=1, keepdims=True)
    out = []
    for index, (row, s, read_together) in enumerate(zip(probs, signals, read, strict=True)):
        best = int(np.argmax(row))
        relation = RELATION_OF_LABEL[LABELS[best]]
        current: Literal["a", "b"] | None = None
        if relation == Relation.TEMPORAL_CHANGE:
            # Times decide; without them the wording ("now", "used to"); failing both, b is the later statement.
            current = s.newer or "b"
        out.append(
            Prediction(
                relation=relation,
                probability=float(row[best]),
                probabilities={RELATION_OF_LABEL[label].value: float(p) for label, p in zip(LABELS, row, strict=True)},
                current=current,
                signals=s,
                read_together=bool(read_together),
                reading=readings.get(index),
            )
        )
    return out


def classify(a_text: str, b_text: str, a_time: When = None, b_time: When = None) -> Prediction:
    """One pair; prefer :func:`classify_pairs` for many."""
    return classify_pairs([PairInput(a_text, b_text, a_time, b_time)])[0]


def stored_vector(vector: Any, embedding_model: str) -> NDArray[np.float32] | None:
    """A stored vector the classifier can use: one made by the model it was trained on."""
    if vector is None or embedding_model != load_detector().embedder:
        return None
    return np.asarray(vector, dtype=np.float32)


def classify_memory_pairs(
    pairs: list[tuple[Memory, Memory]], *, most_read: int | None = None, slot_reads: int | None = None
) -> list[Verdict]:
    """The pipeline's entry point: ``(older, newer)`` memories → one verdict each.

    World times are passed only when they differ by at least a day: a fact's
    ``valid_from`` defaults to its commit time, and two facts committed minutes
    apart say nothing about a change in the world. Dated pairs are read by the
    slot reader too (at most ``slot_reads`` of them, in the order given; ``None``:
    all) — :func:`_one_slot_change` asks whether it reads them as one subject
    given a new value, and :func:`_one_slot_each` keeps one such reading per newer fact.
    """
    inputs = []
    for older, newer in pairs:
        a_time: When = older.valid_from
        b_time: When = newer.valid_from
        # abs() of the timedelta, not of its .days: 40 µs earlier is days == -1.
        if older.valid_from and newer.valid_from and abs(newer.valid_from - older.valid_from) < SAME_DAY:
            a_time = b_time = None
        inputs.append(
            PairInput(
                older.text,
                newer.text,
                a_time,
                b_time,
                stored_vector(older.embedding, older.embedding_model),
                stored_vector(newer.embedding, newer.embedding_model),
            )
        )
    predictions = read_dated_pairs(pairs, classify_pairs(inputs, most_read=most_read), most=slot_reads)
    verdicts = [
        _left_behind(older, newer, prediction)
        or _corrected(older, newer, prediction)
        or _opposite_polarity(older, newer, prediction)
        or _announced_within_subject(older, newer, prediction)
        or _one_slot_change(older, newer, prediction)
        or prediction.verdict()
        for (older, newer), prediction in zip(pairs, predictions, strict=True)
    ]
    return _one_slot_each(pairs, verdicts, predictions)


def _one_slot_each(
    pairs: list[tuple[Memory, Memory]], verdicts: list[Verdict], predictions: list[Prediction]
) -> list[Verdict]:
    """One statement changes one thing: of the older facts the slot reader reads a newer fact as changing,
    only the closest in meaning keeps that reading; the others keep the classifier's own verdict.

    "Switched to the Octopus Cosy tariff for the heat pump." is read as another value of "Electricity
    supplier is Octopus, tariff Agile." and of "Heating is a gas boiler": the reader reads one *thing*
    well, not which of its properties changed, so the fact the newer one is nearest decides.
    """
    chosen: dict[uuid.UUID, tuple[float, int]] = {}  # newer fact → (cosine, index) of its nearest one-slot reading
    for index, ((older, newer), verdict) in enumerate(zip(pairs, verdicts, strict=True)):
        if verdict.one_slot:
            cosine = memory_cosine(older, newer)
            if newer.pk not in chosen or cosine > chosen[newer.pk][0]:
                chosen[newer.pk] = (cosine, index)
    return [
        predictions[index].verdict() if verdict.one_slot and chosen[newer.pk][1] != index else verdict
        for index, ((_, newer), verdict) in enumerate(zip(pairs, verdicts, strict=True))
    ]


def another_value_readings(pairs: Sequence[tuple[Memory, Memory]]) -> list[float]:
    """How sure the readers are that each (older, newer) pair gives one subject another value.

    Two readers read a pair, and the surer one counts: the lookup reader, the slot reader's recipe with pairs
    of stages added ("Bug MOB-88: the Android app crashes on login." → "MOB-88 fixed in app version 3.4.1."),
    and where it is unsure, the slot reader (the worker's; :func:`_read_by_stages_then_slots`). Each sees
    changes the other misses. The lookup reader retires more, and some of it wrongly, so the worker never
    reads with it (``cross_encoder.LOOKUP_READER_PATH``; docs/DETECTION.md).

    The reading is "update" plus "contradiction", from the texts alone. It is 0, without a reading, where
    the facts are known to be two subjects (:func:`subjects_apart`), where the newer one names another thing
    by a word of the older one's ("Team lunch is on Wednesdays." / "The team offsite moved to Friday."), or
    where both name their attribute and the two differ ("The user's running shoes are …" / "The user's
    running club moved …"). Recall orders a subject lookup's hits by it (``recall.hybrid``); nothing is
    retired on it. A reading costs about 10–20 ms on one core per reader, so the last ``READINGS_KEPT`` are
    kept by text: a subject asked about again is not read again.
    """
    texts: list[tuple[str, str] | None] = [
        None
        if subjects_apart(older, newer)
        or another_thing_by_a_shared_word(older.text, older.subject_entity, newer.text, newer.subject_entity)
        or subjects_agree(older.subject, newer.subject).attribute is False
        else (older.text, newer.text)
        for older, newer in pairs
    ]
    with _readings_lock:
        unread = list(dict.fromkeys(t for t in texts if t is not None and t not in _readings))
    if unread:
        read = _read_by_stages_then_slots(unread)
        with _readings_lock:
            for text_pair, value in zip(unread, read, strict=True):
                _readings[text_pair] = value
            while len(_readings) > READINGS_KEPT:
                _readings.popitem(last=False)
    with _readings_lock:
        return [0.0 if t is None else _readings.get(t, 0.0) for t in texts]


READINGS_KEPT = 4096
_readings: OrderedDict[tuple[str, str], float] = OrderedDict()
_readings_lock = threading.Lock()


def _read_by_stages_then_slots(pairs: list[tuple[str, str]]) -> list[float]:
    """The lookup reader reads every pair; the slot reader only those it is unsure of.

    Where the lookup reader already reads another value (≥ ``ONE_SLOT_CHANGE``) the slot reader could only
    agree, and where it gives less than ``LOOKUP_READER_UNSURE`` the slot reader rarely differs (dev and shared
    dev stories: of 61 pairs read, the one the slot reader alone read as another value the lookup reader gave
    0.37). Each reading skipped is one run of a reader, 10–20 ms on one core (docs/BENCHMARKS.md).
    """
    by_stages = [
        _another_value(reading)
        for reading in cross_encoder.load_cross_encoder(cross_encoder.LOOKUP_READER_PATH).probabilities(pairs)
    ]
    unsure = [i for i, value in enumerate(by_stages) if LOOKUP_READER_UNSURE <= value < ONE_SLOT_CHANGE]
    if unsure:
        slot_reader = cross_encoder.load_cross_encoder(cross_encoder.SLOT_READER_PATH)
        for i, reading in zip(unsure, slot_reader.probabilities([pairs[i] for i in unsure]), strict=True):
            by_stages[i] = max(by_stages[i], _another_value(reading))
    return by_stages


def _another_value(reading: Sequence[float]) -> float:
    """A reading's "update" plus "contradiction": how sure it is the newer fact gives the subject another value."""
    return float(reading[LABELS.index("update")] + reading[LABELS.index("contradiction")])


def forget_readings() -> None:
    """Drop the kept readings (benchmarks measure a first reading)."""
    with _readings_lock:
        _readings.clear()


def read_dated_pairs(
    pairs: list[tuple[Memory, Memory]], predictions: list[Prediction], *, most: int | None
) -> list[Prediction]:
    """``predictions`` with the slot reader's reading of each dated pair (``most`` at most, in order).

    Pairs that cannot be one subject given another value whatever the reading
    (two keys, two speakers, a relative; see :func:`_may_read_as_one`) are not read.
    """
    dated = [
        index
        for index, (older, newer) in enumerate(pairs)
        if _dated_apart(older, newer) and not subjects_apart(older, newer)
    ][:most]
    # A reading changes nothing where the texts already rule out one subject given another value.
    readable = [index for index in dated if _may_read_as_one(*pairs[index], predictions[index])]
    if not readable:
        return predictions
    reader = cross_encoder.load_cross_encoder(cross_encoder.SLOT_READER_PATH)
    readings = reader.probabilities([(pairs[i][0].text, pairs[i][1].text) for i in readable])
    out = list(predictions)
    for index, reading in zip(readable, readings, strict=True):
        out[index] = replace(out[index], slot_reading=tuple(map(float, reading)))
    return out


def _dated_apart(older: Memory, newer: Memory) -> bool:
    return bool(older.valid_from and newer.valid_from) and newer.valid_from - older.valid_from >= SAME_DAY


def subjects_apart(older: Memory, newer: Memory) -> bool:
    """Known to be two subjects whatever the texts say: two keys, two speakers, someone and a relative,
    two names with no word in common ("Acme Corp …" / "Initech …"), a name and one built on it ("ci-deployer" /
    "ci-deployer-staging").

    What no reading of the texts can overrule (the guard, ``conflicts.services.subject_guard``, asks the same).
    """
    return (
        bool(older.key and newer.key and older.key != newer.key)
        or relatives(older.subject_entity, newer.subject_entity)
        or names_apart(older.text, older.subject_entity, newer.text, newer.subject_entity)
        or speakers_differ(older.text, older.agent, older.subject_entity, newer.text, newer.agent, newer.subject_entity)
        or _named_after_it(older, newer)
        or numbered_apart(older.text, newer.text)
        or identifiers_extended(older.text, newer.text)
        or (
            siblings(older.subject_entity, newer.subject_entity)
            and states_its_subject(older.text)
            and states_its_subject(newer.text)
        )
    )


def _named_after_it(older: Memory, newer: Memory) -> bool:
    """One fact's subject becomes the qualifier of a new noun in the other's: "Backups are kept for 30 days." /
    "Backup alerts moved to PagerDuty." — alerts about backups are no backups, nor are "nightly build logs"
    the "nightly builds", nor "production alerts" production. Unless the new noun names what the first fact
    does to the thing ("Logs are shipped to Splunk." / "Log shipping moved to Datadog." is one subject named
    two ways), or a property of it ("deploy days", "backup window").
    """
    for short_fact, long_fact in ((older, newer), (newer, older)):
        short, long = short_fact.subject_entity.split(), long_fact.subject_entity.split()
        if not short or len(long) <= len(short):
            continue
        if singular(short[-1]) != short[-1]:  # a plural noun qualifies a new one: "backups" → "backup alerts"
            if long[: len(short) - 1] != short[:-1] or long[len(short) - 1] != singular(short[-1]):
                continue
        elif not (long_fact is newer and long[: len(short)] == short and subject_before_a_verb(newer.text)):
            # A singular one only where the newer fact adds a noun before its verb ("Production runs on AWS." /
            # "Production alerts now go to Opsgenie."): an older fact's longer name may be cut short later
            # ("The checkout service …" / "Checkout got rewritten …"), and a verb read into a name adds no noun.
            continue
        if names_a_property(long[-1]):
            continue  # "Deploys go out on Tuesdays." / "Deploy days changed to Mondays.": when deploys go out
        done_to_it = {rules.stem(w) for w in rules.tokens(short_fact.text)}
        if rules.stem(long[-1]) not in done_to_it:
            return True
    return False


# "its logs", "their billing contact": a belonging the fact names.
_BELONGING = re.compile(r"\b(?:its|their|his|her)\s+(?:\w+\s+)?(\w+)", re.IGNORECASE)


def _properties_apart(older: Memory, newer: Memory) -> bool:
    """The newer fact names a property the subject reader knows, and the older one is not shown to have it.

    The reader reads one *person or thing* precisely, not one property of it: "Saoirse travelled to
    Zanzibar for a wedding." / "Saoirse moved to Trondheim." reads as an update (0.95), and so does a new
    job followed by a move. Where the newer fact's property is known ("home city"), the older must
    agree on it. Where only the older one's is ("region"), a newer fact that names another belonging of
    the subject ("The staging cluster moved its logs to Loki.") speaks of that, not of the region.
    """
    if not newer.subject_attribute:
        owned = {singular(w.lower()) for w in _BELONGING.findall(newer.text)}
        return bool(older.subject_attribute and owned) and not owned & set(older.subject_attribute.split())
    agreement = subjects_agree(older.subject, newer.subject)
    if (
        not older.subject_attribute
        and agreement.entity is True
        and not any(of_many_properties(fact.text, fact.subject_entity) for fact in (older, newer))
    ):
        # "Our mobile app is written in Flutter." / "The mobile app was rewritten in React Native.": a common
        # thing's property left unnamed is no other property; the reader decides. Not a person's or a named
        # thing's: "Saoirse travelled to Zanzibar for a wedding." says nothing of where she lives.
        return False
    return agreement.attribute is not True


def _may_read_as_one(older: Memory, newer: Memory, prediction: Prediction) -> bool:
    """What the texts must allow before a reading can make one subject of two facts.

    The newer fact announces the change (unannounced, the reader gives "another value" to unrelated chat
    lines and events: "Oh I love that for you." / "Haha that's so true." 0.99) — or one source says it
    of one named thing and the reader is sure of an update (:func:`_restated_by_its_source`); both name
    something besides their values ("Six, including me." / "Just One it is." name nothing in common); a
    property the newer fact names is the older one's too; and two chat lines are not two named speakers'.
    """
    signals = prediction.signals
    announced = bool(signals.change_markers_b or signals.past_markers_a) and not rules.adds_without_moving(newer.text)
    shared = shared_things(older.text, newer.text)
    return (
        (announced or _restated_by_its_source(older, newer, prediction))
        and bool(shared)
        and not _only_modifiers_shared(older, newer, shared)
        and not _properties_apart(older, newer)
        and not _of_the_older_value(older, newer)
        and not _about_the_older_value(older, newer, prediction.signals)
        and not named_speakers_differ(older.text, newer.text)
    )


_POSSESSOR = re.compile(r"\b([\w-]+)['’]s\b")


def _of_the_older_value(older: Memory, newer: Memory) -> bool:
    """The newer fact's thing belongs to what the older fact gives as its value: "The user's son goes to St.
    Mary's school." / "The user's son switched to the school's football club." — the club is the school's,
    and the school stays. A possessor that is the older fact's subject ("Acme's billing contact …" after
    "… our contact at Acme Corp") is no value of it."""
    older_words = {singular(w) for w in rules.tokens(without_speaker(older.text))}
    subject_words = {singular(w.removesuffix("'s")) for w in older.subject_entity.split()}
    possessors = {singular(w.lower()) for w in _POSSESSOR.findall(newer.text)}
    return bool((possessors & older_words) - subject_words - {"user"})


# Wording by which a thing ends or gives way: then the older fact's value is gone, and the older fact with it.
_ENDED = re.compile(
    r"\b(?:replaced|retired|removed|closed|shut down|sold|decommissioned|discontinued|cancel+ed|deprecated|"
    r"dropped|left|quit|no longer|went bust|shut|gone)\b",
    re.IGNORECASE,
)


def _figures(text: str) -> set[str]:
    """The numbers a text names, as digits: "Tailwind 3" → {"3"}, "v4" → {"4"}, "1,200" → {"1200"}."""
    return {re.sub(r"[^\d.]", "", token).strip(".") for token in re.findall(r"\w*\d[\w.,]*", text)}


def _about_the_older_value(older: Memory, newer: Memory, signals: rules.RuleSignals) -> bool:
    """The newer fact is about the thing the older one's main statement gives as its value, and gives it a
    property the older does not state: "Tomás works from the Madrid office." / "The Madrid office moved to
    Calle de Alcalá." — the office moved, Tomás still works from it. Not where the newer fact gives a figure
    of the older's value anew ("Styling is Tailwind 3." / "Tailwind upgraded to v4."), nor where the thing
    ended or gave way ("Jenkins was replaced by GitHub Actions" after "Our CI runs on Jenkins").
    """
    if not (states_its_subject(older.text) and states_its_subject(newer.text)) or _ENDED.search(newer.text):
        return False
    figures_older, figures_newer = _figures(older.text), _figures(newer.text)
    if signals.value_differs or (figures_older and figures_newer - figures_older):
        return False
    subject_words = {singular(w.lower().removesuffix("'s")) for w in stated_subject(older.text)}
    main_words = {singular(w) for w in rules.tokens(main_statement(older.text))} - subject_words
    newer_subject = {singular(w.removesuffix("'s")) for w in newer.subject_entity.split()}
    newer_words = {singular(w) for w in rules.tokens(without_speaker(newer.text))}
    return bool(newer_subject) and newer_subject <= main_words and not subject_words & newer_words


# Below this cosine, two subject phrases that share only a qualifying word name two things.
ONE_THING_PHRASE_COSINE = 0.65


def _only_modifiers_shared(older: Memory, newer: Memory, shared: set[str]) -> bool:
    """All the two facts share is a word that qualifies two different things: "The deploy window …" /
    "Deploy notifications moved …" share "deploy", and a window is no notification. Both must state their
    subjects, as phrases whose last words (their heads) differ and are not shared, and the two phrases
    must be apart in meaning (``ONE_THING_PHRASE_COSINE``)."""
    if not (states_its_subject(older.text) and states_its_subject(newer.text)):
        return False
    older_words, newer_words = older.subject_entity.split(), newer.subject_entity.split()
    if len(older_words) < 2 or len(newer_words) < 2:
        return False
    heads = {rules.stem(older_words[-1]), rules.stem(newer_words[-1])}
    modifiers = {rules.stem(w) for w in older_words[:-1]} & {rules.stem(w) for w in newer_words[:-1]}
    if len(heads) < 2 or shared & heads or not shared <= modifiers:
        return False
    # "Strength training" and "strength sessions" are one thing named two ways (0.78); a deploy window and
    # deploy notifications are two (0.45).
    older_vector, newer_vector = embeddings.embed_texts([older.subject_entity, newer.subject_entity])
    return float(np.dot(older_vector, newer_vector)) < ONE_THING_PHRASE_COSINE


def _restated_by_its_source(older: Memory, newer: Memory, prediction: Prediction) -> bool:
    """One agent gives the thing it spoke of another value, unannounced, and the reader is sure it is an update.

    "The design system is built in Figma." → (40 days on, the same agent) "… built in Penpot.": a source
    that says something new of what it said before is updating itself. From another agent the same words
    are a disagreement that a person settles. Only of a thing, not the user or a chat line's speaker
    (:func:`candidates.one_thing`): what they wish for or do accumulates ("Saoirse mentioned: I always
    wanted to learn the bassoon, maybe one day." / "… the mandolin …").
    Before the reading (``slot_reading`` None) only the source and the entity ask whether it is worth it.
    """
    reading = prediction.slot_reading
    return (
        bool(older.agent)
        and older.agent == newer.agent
        and one_thing(older, newer)
        and (reading is None or reading[LABELS.index("update")] >= UNANNOUNCED_UPDATE)
    )


def _one_slot_change(older: Memory, newer: Memory, prediction: Prediction) -> Verdict | None:
    """Tier 1's third reading: the slot reader reads the newer fact as another value of the older one's.

    "Our CI runs on Jenkins." → "CI is on GitHub Actions since the migration.":
    the subject reader's lexicon knows no attribute here, and the network reads
    the two as compatible. The slot reader, reading both as one input, gives
    "update" or "contradiction" mostly where both speak of one thing — so its
    reading is evidence of one subject (``Verdict.one_slot``) as well as of the
    change, for a pair at least a day apart that nothing marks as two subjects
    and whose texts allow it (:func:`_may_read_as_one`: the newer fact announces
    the change, among others). Not where either is a chat turn that greets, asks
    or reacts as well as it claims (``speech_acts.does_more_than_claim``): there
    the reader reads the conversation's topic, not one property.
    """
    reading = prediction.slot_reading
    if reading is None or not _dated_apart(older, newer) or subjects_apart(older, newer):
        return None
    changed = _another_value(reading)
    if changed < ONE_SLOT_CHANGE or not _may_read_as_one(older, newer, prediction):
        return None
    if rules.only_novelty(prediction.signals) and changed < NOVELTY_ONLY_CHANGE:
        return None
    if does_more_than_claim(older.text) or does_more_than_claim(newer.text):
        return None  # a chat turn that also greets, asks or reacts: its topic, not one property, was read
    return Verdict(
        relation=Relation.TEMPORAL_CHANGE,
        probability=changed,
        tier=TIER_READ,
        current="b",
        announced=True,
        one_slot=True,
        rule=SLOT_READER,
        reasons=(f"read together as one subject with another value (p={changed:.2f})", *prediction.reasons),
        probabilities={RELATION_OF_LABEL[label].value: p for label, p in zip(LABELS, reading, strict=True)},
    )


def _announced_within_subject(older: Memory, newer: Memory, prediction: Prediction) -> Verdict | None:
    """Tier 0 over tier 1: one subject, a later fact that says it changed — an update.

    "The user lives in Lisbon." (September) then "The user says they moved to
    Berlin last month." (November): both about the user's home city
    (memories/subjects.py), the newer one at least a day later and announcing a
    change ("moved to", "now", "no longer", or "used to" on the older side). The
    subject plays the part an agent's ``key`` plays: the same slot with a new value.
    Not when both say the same thing (a duplicate is for the merge rule): a
    verdict of duplicate stands unless the newer fact names a value the older
    one lacks ("The book club meeting is on Mondays." → "Book club meetings are
    on Wednesdays now." reads alike to the model, but Wednesday is new).
    """
    agreement = subjects_agree(older.subject, newer.subject)
    signals = prediction.signals
    announced = (signals.change_markers_b or signals.past_markers_a) and not rules.adds_without_moving(newer.text)
    later = (newer.valid_from - older.valid_from).days >= 1
    if not (agreement.same and announced and later):
        return None
    if prediction.relation == Relation.DUPLICATE and not new_values(older.text, newer.text):
        return None
    marker = (signals.change_markers_b or signals.past_markers_a)[0]
    return Verdict(
        relation=Relation.TEMPORAL_CHANGE,
        probability=SUBJECT_CHANGE_PROBABILITY,
        tier="rules",
        current="b",
        announced=True,
        rule=ANNOUNCED_WITHIN_SUBJECT,
        reasons=(f'same subject ({newer.subject_label}) and the newer fact announces a change ("{marker}")',),
    )


_VALUE_TOKEN = re.compile(r"[\w][\w.%/:+-]*")
_CALENDAR = re.compile(
    r"^(?:mon|tues|wednes|thurs|fri|satur|sun)days?$|^(?:january|february|march|april|may|june|july|august|"
    r"september|october|november|december)$",
    re.IGNORECASE,
)


def new_values(older: str, newer: str) -> list[str]:
    """Values ``newer`` states and ``older`` does not: figures, names, days.

    A value is a token with a digit ("B2", "6.6%", "10:00"), a capitalised word
    not opening the sentence ("Viking", "Braga"), or a weekday or month.
    """

    def values(text: str) -> list[str]:
        found = []
        for index, token in enumerate(_VALUE_TOKEN.findall(text)):
            token = token.rstrip(".:-")
            if not token:
                continue
            if any(c.isdigit() for c in token) or _CALENDAR.match(token) or (index > 0 and token[0].isupper()):
                found.append(token.lower().removesuffix("s") if _CALENDAR.match(token) else token.lower())
        return found

    stated = set(values(older))
    return [value for value in values(newer) if value not in stated]


def shared_things(a: str, b: str) -> set[str]:
    """Content words (crudely stemmed) both texts use, less values: figures, weekdays, months.

    What a reading of one subject needs at the least: something both facts name
    besides the values that differ ("test" and "postgresql" in "The test database
    is PostgreSQL 13." / "Test DB upgraded to PostgreSQL 16.").
    """

    def things(text: str) -> set[str]:
        # A chat line's "Name:" is who speaks, not what it is about.
        stems = rules.content_stems(rules.tokens(without_speaker(text)))
        return {s for s in stems if not any(c.isdigit() for c in s) and not _CALENDAR.match(s)}

    return things(a) & things(b)


def _corrected(older: Memory, newer: Memory, prediction: Prediction) -> Verdict | None:
    """Tier 0 over tier 1: the newer fact says it corrects an earlier one about the same subject.

    "BM25 nDCG@10 = 0.412" then "Correction to the previous entry: BM25 nDCG@10
    is 0.418": the older value was never true, and the newer one replaces it.
    """
    marker = rules.correction_marker(newer.text)
    if marker is None or not (prediction.signals.same_subject or memory_cosine(older, newer) >= CORRECTED_COSINE):
        return None
    return Verdict(
        relation=Relation.TEMPORAL_CHANGE,
        probability=LEFT_BEHIND_PROBABILITY,
        tier="rules",
        current="b",
        announced=True,
        rule=CORRECTION,
        reasons=(f'the newer fact corrects an earlier one ("{marker}")', *prediction.reasons),
    )


# Seed 003: writers who mark one fact +1 and the other −1 say themselves that the facts disagree.
OPPOSITE_POLARITY_COSINE = 0.8
OPPOSITE_POLARITY_PROBABILITY = 0.9


def _opposite_polarity(older: Memory, newer: Memory, prediction: Prediction) -> Verdict | None:
    """Tier 0 over tier 1: explicit, opposite ``polarity`` on two facts about one subject is a contradiction.

    Only where the model saw no conflict (compatible or duplicate): a temporal
    change it found stays one. "Use ruff" (+1) and "Use ruff" (−1) read as a
    duplicate to the model; the writers' polarity says otherwise.
    """
    if older.polarity * newer.polarity != -1 or prediction.verdict().is_conflict:
        return None
    if not (prediction.signals.same_subject or memory_cosine(older, newer) >= OPPOSITE_POLARITY_COSINE):
        return None
    return Verdict(
        relation=Relation.TRUE_CONTRADICTION,
        probability=OPPOSITE_POLARITY_PROBABILITY,
        tier="rules",
        rule=OPPOSITE_POLARITY,
        reasons=("the writers gave the two facts opposite polarity", *prediction.reasons),
    )


def _left_behind(older: Memory, newer: Memory, prediction: Prediction) -> Verdict | None:
    """Tier 0 over tier 1 for memories: the newer fact says it left what the older one states.

    "Unit tests: Jest 29" then "Moved unit tests from Jest to Vitest" is a
    temporal change whatever the model says (it was trained on short sentence
    pairs and reads long facts poorly), provided the two are about one subject.
    """
    value = rules.leaves_what_other_states(newer.text, older.text)
    if value is None or not (prediction.signals.same_subject or memory_cosine(older, newer) >= LEFT_BEHIND_COSINE):
        return None
    return Verdict(
        relation=Relation.TEMPORAL_CHANGE,
        probability=LEFT_BEHIND_PROBABILITY,
        tier="rules",
        current="b",
        announced=True,
        rule=LEFT_BEHIND,
        reasons=(f'the newer fact leaves "{value}", which the older one states', *prediction.reasons),
    )
