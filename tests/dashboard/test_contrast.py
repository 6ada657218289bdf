"""Every text colour in static/css/app.css on the backgrounds it is used on meets WCAG AA, in both themes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

APP_CSS = Path(__file__).resolve().parents[2] / "static" / "css" / "app.css"
AA_TEXT = 4.5

# (text, background) as used by the stylesheet: body text, muted text, links, badges, messages, buttons.
PAIRS = [
    ("fg", "bg"),
    ("fg", "surface"),
    ("fg", "subtle"),
    ("fg", "info-bg"),
    ("fg", "ok-soft"),
    ("fg", "ok-bg"),
    ("fg", "crit-bg"),
    ("muted", "bg"),
    ("muted", "surface"),
    ("muted", "subtle"),
    ("muted", "low-bg"),
    ("accent", "bg"),
    ("accent", "surface"),
    ("accent", "info-bg"),
    ("on-accent", "accent"),
    ("bad", "surface"),
    ("bad", "crit-bg"),
    ("crit", "crit-bg"),
    ("high", "high-bg"),
    ("med", "med-bg"),
    ("low", "low-bg"),
    ("ok", "ok-bg"),
    ("ok", "surface"),
]


def themes() -> dict[str, dict[str, str]]:
    css = APP_CSS.read_text()
    light, dark = re.findall(r":root \{(.*?)\}", css, flags=re.DOTALL)[:2]
    palette = dict(re.findall(r"--([\w-]+):\s*(#[0-9a-fA-F]{6})", light))
    return {"light": palette, "dark": {**palette, **dict(re.findall(r"--([\w-]+):\s*(#[0-9a-fA-F]{6})", dark))}}


def luminance(colour: str) -> float:
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_it_reads_both_themes_with_every_colour() -> None:
    found = themes()
    names = {name for pair in PAIRS for name in pair}
    assert names <= found["light"].keys()
    assert names <= set(re.findall(r"--([\w-]+):", APP_CSS.read_text().split("prefers-color-scheme: dark")[1]))


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize(("text", "background"), PAIRS)
def test_text_meets_wcag_aa(theme: str, text: str, background: str) -> None:
    palette = themes()[theme]

    ratio = contrast(palette[text], palette[background])

    assert ratio >= AA_TEXT, f"{theme}: --{text} on --{background} is {ratio:.2f}:1"


def test_the_ratio_matches_known_values() -> None:
    assert contrast("#000000", "#ffffff") == pytest.approx(21)
    assert contrast("#a27b00", "#fff8dc") == pytest.approx(3.67, abs=0.01)  # the old medium badge
