"""Why the hub asks, in plain sentences, laid out the same way for every detector.

Detectors store their evidence in their own shapes (the pairwise tiers:
relation, probability, rule reasons; the narrative detective: one reason line
and the facts). :func:`card_evidence` turns any of them into three rows —
who found it, how sure it is, and why — so every card reads alike.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from conflicts.models import ConflictCard
from conflicts.severity import offline_precision, verdict_probability, workspace_precision

CONTEXTS = {
    "ingestion": "the check when a fact arrived",
    "drift": "the drift check",
    "consolidation": "the consolidation job",
    "narrative": "the story detective, reading the workspace's history",
    "pre_action": "the check before an agent acted",
    "manual": "a manual check",
}
TIERS = {
    "rules": "wording rules",
    "classifier": "the trained classifier",
    "cross_encoder": "the classifier's second reading",
    "offline": "its offline rules",
    "llm": "the language model",
}
RELATIONS = {
    "temporal_change": "a change over time",
    "true_contradiction": "a contradiction",
    "duplicate": "the same fact said twice",
    "compatible": "compatible",
}
# Rule reasons ("numbers differ: 120seats vs 200seats") as sentences.
_REASON_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^same subject: (.+)$"), "Both speak of the same thing ({0})."),
    (re.compile(r"^share words \((.+)\) but not a subject$"), "They share words ({0}) but not a subject."),
    (re.compile(r"^numbers differ: (.+) vs (.+)$"), "The numbers differ: {0} against {1}."),
    (re.compile(r"^versions differ: (.+) vs (.+)$"), "The versions differ: {0} against {1}."),
    (re.compile(r"^dates differ: (.+) vs (.+)$"), "The dates differ: {0} against {1}."),
    (re.compile(r"^polarity flip: only (the \w+) statement is negated$"), "Only {0} statement says “not”."),
    (re.compile(r"^opposite values: (.+)$"), "They state opposite values: {0}."),
    (re.compile(r"^change marker: (.+)$"), "The wording announces a change: {0}."),
    (re.compile(r"^past-tense marker: (.+)$"), "The wording puts one of them in the past: {0}."),
    (re.compile(r"^broken habit: (.+)$"), "A habit is broken: {0}."),
    (
        re.compile(r"^valid from (\S+) and (\S+) \((\d+) days apart\)$"),
        "They were stated {2} days apart ({0} and {1}).",
    ),
]
_RELATION_P = re.compile(r"\s*\((\w+), p=([01](?:\.\d+)?)\)")
_COSINE = re.compile(r"\s*\(cosine ([01](?:\.\d+)?)\)")
_BARE_P = re.compile(r"\s*\(p=([01](?:\.\d+)?)\)")


@dataclass
class Evidence:
    found_by: str
    how_sure: str
    reasons: list[str] = field(default_factory=list)


def detector_in_words(detector: str) -> str:
    context, _, tier = detector.partition(":")
    where = CONTEXTS.get(context, context.replace("_", " ") or "a detector")
    how = TIERS.get(tier, tier.replace("_", " "))
    return f"{where[:1].upper()}{where[1:]}, with {how}." if how else f"{where[:1].upper()}{where[1:]}."


def sentence(reason: str) -> str:
    """One rule reason or detective line as a sentence, without raw tokens."""
    text = str(reason).strip()
    for pattern, template in _REASON_PATTERNS:
        found = pattern.match(text)
        if found:
            return template.format(*found.groups())
    text = _RELATION_P.sub(
        lambda m: f" (read as {RELATIONS.get(m.group(1), m.group(1))}, {_percent(m.group(2))})", text
    )
    text = _COSINE.sub(lambda m: f" (similar in meaning: {float(m.group(1)):.2f})", text)
    text = _BARE_P.sub(lambda m: f" ({_percent(m.group(1))})", text)
    text = text.replace("_", " ")
    if not text:
        return ""
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def card_evidence(card: ConflictCard) -> Evidence:
    evidence = card.evidence if isinstance(card.evidence, dict) else {}
    probability = verdict_probability(evidence)
    relation = RELATIONS.get(str(evidence.get("relation", "")), "")
    measured = workspace_precision(workspace_id=card.workspace_id, detector=card.detector)
    precision = measured if measured is not None else offline_precision(detector=card.detector, evidence=evidence)
    source = "by this workspace's answers" if measured is not None else "measured offline"
    parts = []
    if relation or probability is not None:
        read = f"It read this as {relation}" if relation else "It read this as a conflict"
        parts.append(read + (f", {_percent(probability)}." if probability is not None else "."))
    parts.append(f"This detector is right about {precision:.0%} of the time ({source}).")
    reasons: list[str] = []
    raw = evidence.get("reasons")
    if isinstance(raw, list):
        reasons += [sentence(str(r)) for r in raw]
    for key in ("reason", "reasoning"):
        value = evidence.get(key)
        if isinstance(value, str) and value.strip():
            reasons.append(sentence(value))
    return Evidence(detector_in_words(card.detector), " ".join(parts), [r for r in dict.fromkeys(reasons) if r])


def _percent(value: str | float) -> str:
    return f"{float(value):.0%} likely"
