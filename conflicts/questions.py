"""What a card asks, in words a reviewer answers directly: one question form per kind.

A card's stored ``question`` is what the detector wrote when it raised it; the
reviewer sees the form below, built from the facts that still stand, and each
button is a literal answer to it:

- **still true** (a stale card over two facts): "Is it still true that “X”?" —
  *Still true* (``y``), *Changed* (``n``: to the other fact), *Both hold* (``b``).
- **which holds** (a contradiction, an ambiguity, a reversal, any card over 3+
  facts): "Which holds now?" — the facts themselves are the buttons (``1`` …
  ``9``); the asked fact also answers to ``y`` and the newest other fact to
  ``n``, so ``y`` / ``n`` mean the same on every card and from the inbox list;
  *All of them hold* / *Both hold* (``b``).

Skip (``s``) is on every form. Each answer is posted as ``choice[:fact id]``
and means exactly what ``conflicts.feedback.card_answer`` does with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from conflicts.models import CardKind, ConflictCard
from conflicts.retirement import standing
from memories.models import Memory
from memories.subjects import Subject, subjects_agree

_WORD = re.compile(r"[A-Za-zÀ-ÿ][\w'’-]*")
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "now",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "that",
        "the",
        "their",
        "them",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "which",
        "who",
        "will",
        "with",
        "you",
        "your",
        "again",
        "still",
        "then",
        "there",
        "here",
        "also",
        "all",
        "any",
        "each",
        "just",
        "only",
        "same",
        "than",
        "too",
        "very",
        "can",
        "could",
        "should",
        "would",
        "may",
        "might",
        "must",
        "new",
        "old",
        "these",
        "those",
        "per",
    ]
)


@dataclass(frozen=True)
class AnswerOption:
    label: str  # the literal answer, e.g. "Still true", or a fact's text
    value: str  # what the form posts as ``answer``: "yes", "no:<fact id>", "both", "skip"
    keys: tuple[str, ...]
    style: str = ""
    detail: str = ""  # a line under the label, e.g. what "Changed" changes to

    @property
    def data_key(self) -> str:
        return " ".join(self.keys)


@dataclass
class QuestionForm:
    form: str  # "still_true" | "which_holds"
    prompt: str
    subject: str
    options: list[AnswerOption] = field(default_factory=list)
    facts: list[Memory] = field(default_factory=list)  # the standing facts, oldest first

    @property
    def line(self) -> str:
        return inbox_prompt(self)


def card_subject(facts: list[Memory]) -> str:
    """What the card is about: the facts' shared key, else the subject they agree on ("the user's home city"),
    else the content words they share, else the first words."""
    keys = [fact.key for fact in facts if getattr(fact, "key", "")]
    if keys:
        return keys[0].replace("_", " ").strip()
    subjects = [Subject(fact.subject_entity, fact.subject_attribute) for fact in facts]
    first = subjects[0] if subjects else Subject("", "")
    if first.entity and first.attribute and all(subjects_agree(first, other).same for other in subjects[1:]):
        return first.label_as_written(facts[0].text)
    word_sets = [[w for w in _words(fact.text) if w.lower() not in _STOP] for fact in facts]
    if word_sets and word_sets[0]:
        shared_lower = set.intersection(*({w.lower() for w in words} for words in word_sets))
        shared = [w for w in word_sets[0] if w.lower() in shared_lower]
        unique = list(dict.fromkeys(shared))[:4]
        if unique:
            return " ".join(unique)
        return " ".join(word_sets[0][:5]) + "…"
    return facts[0].text[:40] if facts else ""


def _words(text: str) -> list[str]:
    """Words without a possessive ending, so "Maya's" and "Maya" are one subject."""
    return [re.sub(r"['’]s$", "", word) for word in _WORD.findall(text)]


def question_form(card: ConflictCard, facts: list[Memory]) -> QuestionForm:
    """The form for ``card`` given its facts (oldest first); only facts that still stand are offered."""
    live = [fact for fact in facts if standing(fact)] or list(facts)
    asked = next((fact for fact in live if fact.pk == card.asked_memory_id), live[-1] if live else None)
    subject = card_subject(facts)
    if asked is None:
        return QuestionForm("which_holds", card.question, subject)
    others = [fact for fact in live if fact.pk != asked.pk]
    newest_other = others[-1] if others else None
    if card.kind == CardKind.STALE and len(live) == 2 and newest_other is not None:
        options = [
            AnswerOption("Still true", "yes", ("y",), "yes"),
            AnswerOption("Changed", f"no:{newest_other.pk}", ("n",), "no", detail=f"now: {_short(newest_other.text)}"),
            AnswerOption("Both hold", "both", ("b",), "both", detail="not a conflict"),
            AnswerOption("Skip", "skip", ("s",), "skip"),
        ]
        prompt = f"Is it still true that “{_short(asked.text, 160)}”?"
        return QuestionForm("still_true", prompt, subject, options, live)
    options = []
    for number, fact in enumerate(live, start=1):
        keys: tuple[str, ...] = (str(number),) if number <= 9 else ()
        if fact.pk == asked.pk:
            options.append(AnswerOption(_short(fact.text, 120), "yes", (*keys, "y"), "choice"))
        elif newest_other is not None and fact.pk == newest_other.pk:
            options.append(AnswerOption(_short(fact.text, 120), f"no:{fact.pk}", (*keys, "n"), "choice"))
        else:
            options.append(AnswerOption(_short(fact.text, 120), f"no:{fact.pk}", keys, "choice"))
    both = "Both hold" if len(live) == 2 else "All of them hold"
    options.append(AnswerOption(both, "both", ("b",), "both", detail="not a conflict"))
    options.append(AnswerOption("Skip", "skip", ("s",), "skip"))
    prompt = "Which is true?" if card.kind == CardKind.CONTRADICTION else "Which holds now?"
    return QuestionForm("which_holds", prompt, subject, options, live)


def inbox_prompt(form: QuestionForm) -> str:
    """One line for the inbox: the prompt with its options."""
    if form.form == "still_true":
        return form.prompt
    texts = [f"“{_short(option.label, 70)}”" for option in form.options if option.style == "choice"]
    return f"{form.prompt} " + " or ".join(texts)


def parse_answer(value: str) -> tuple[str, str | None]:
    """``"no:<fact id>"`` → ``("no", "<fact id>")``; a bare choice has no fact."""
    choice, _, fact = value.partition(":")
    return choice.strip(), (fact.strip() or None)


def _short(text: str, limit: int = 90) -> str:
    text = text.strip().rstrip(".")
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
