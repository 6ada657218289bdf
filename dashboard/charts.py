"""Small charts drawn server-side as inline SVG: no JavaScript, no chart library, works offline."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

WIDTH = 640
HEIGHT = 180
PAD_LEFT = 36
PAD_BOTTOM = 22
PAD_TOP = 10


@dataclass
class Series:
    name: str
    values: Sequence[float]
    css: str  # a class in app.css that sets the fill / stroke


def _tag(template: str, *args: object) -> str:
    """Fill ``template``: numbers as they are (so ``{:.1f}`` works), everything else HTML-escaped."""
    return template.format(*(a if isinstance(a, int | float) else escape(str(a)) for a in args))


def _svg(body: Sequence[str], label: str, width: int = WIDTH, height: int = HEIGHT, role: str = "img") -> SafeString:
    # A picture with links inside is a group of links, not an image: an image's content is not interactive.
    return mark_safe(  # noqa: S308 - every piece is built with _tag, which escapes text
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="{role}" aria-label="{escape(label)}">'
        + "".join(body)
        + "</svg>"
    )


def _axis(y_max: float, ticks: int = 3, fmt: str = "{:.0f}") -> list[str]:
    parts: list[str] = []
    plot_h = HEIGHT - PAD_TOP - PAD_BOTTOM
    for i in range(ticks + 1):
        value = y_max * i / ticks
        y = HEIGHT - PAD_BOTTOM - plot_h * i / ticks
        parts.append(_tag('<line class="grid" x1="{}" x2="{}" y1="{}" y2="{}"/>', PAD_LEFT, WIDTH, y, y))
        parts.append(_tag('<text class="tick" x="{}" y="{}">{}</text>', PAD_LEFT - 4, y + 4, fmt.format(value)))
    return parts


def bar_chart(labels: Sequence[str], series: Sequence[Series], *, label: str, every: int = 5) -> SafeString:
    """Grouped bars, one group per label (e.g. a day), with a small legend."""
    y_max = max([1.0, *(v for s in series for v in s.values)])
    y_max = math.ceil(y_max)
    plot_w = WIDTH - PAD_LEFT
    plot_h = HEIGHT - PAD_TOP - PAD_BOTTOM
    group = plot_w / max(1, len(labels))
    bar = max(1.0, (group - 2) / max(1, len(series)))
    parts = _axis(y_max)
    for i, text in enumerate(labels):
        x0 = PAD_LEFT + i * group + 1
        for j, s in enumerate(series):
            value = s.values[i]
            h = plot_h * value / y_max
            parts.append(
                _tag(
                    '<rect class="{}" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}">'
                    "<title>{}: {} {}</title></rect>",
                    s.css,
                    x0 + j * bar,
                    HEIGHT - PAD_BOTTOM - h,
                    bar,
                    h,
                    text,
                    value,
                    s.name,
                )
            )
        if i % every == 0:
            parts.append(_tag('<text class="label" x="{:.1f}" y="{}">{}</text>', x0, HEIGHT - 6, text))
    parts.extend(_legend(series))
    return _svg(parts, label)


def _legend(series: Sequence[Series]) -> list[str]:
    parts: list[str] = []
    for j, s in enumerate(series):
        x = WIDTH - 110 * (len(series) - j)
        parts.append(_tag('<rect class="{}" x="{}" y="2" width="10" height="10"/>', s.css, x))
        parts.append(_tag('<text class="legend" x="{}" y="11">{}</text>', x + 14, s.name))
    return parts


def line_chart(
    values: Sequence[float], *, label: str, low: float, high: float, reference: float | None = None
) -> SafeString:
    """A step line of ``values`` (oldest first) between ``low`` and ``high``, with an optional reference line."""
    plot_w = WIDTH - PAD_LEFT
    plot_h = HEIGHT - PAD_TOP - PAD_BOTTOM

    def y(value: float) -> float:
        return HEIGHT - PAD_BOTTOM - plot_h * (value - low) / (high - low)

    parts = []
    for tick in (low, (low + high) / 2, high):
        parts.append(
            _tag('<line class="grid" x1="{}" x2="{}" y1="{:.1f}" y2="{:.1f}"/>', PAD_LEFT, WIDTH, y(tick), y(tick))
        )
        parts.append(_tag('<text class="tick" x="{}" y="{:.1f}">{:.2f}</text>', PAD_LEFT - 4, y(tick) + 4, tick))
    if reference is not None:
        parts.append(
            _tag(
                '<line class="reference" x1="{}" x2="{}" y1="{:.1f}" y2="{:.1f}"/>',
                PAD_LEFT,
                WIDTH,
                y(reference),
                y(reference),
            )
        )
    if values:
        step = plot_w / max(1, len(values))
        points = []
        for i, value in enumerate(values):
            points.append(f"{PAD_LEFT + i * step:.1f},{y(value):.1f}")
            points.append(f"{PAD_LEFT + (i + 1) * step:.1f},{y(value):.1f}")
        parts.append(_tag('<polyline class="line" points="{}"/>', " ".join(points)))
    return _svg(parts, label)


@dataclass
class Node:
    label: str
    href: str
    css: str = ""


@dataclass
class Edge:
    node: Node
    rel: str
    outgoing: bool


# Node labels: two lines of at most this many characters, about 6 px each at 11 px.
LABEL_CHARS = 26
CHAR_WIDTH = 6.2


@dataclass
class _Neighbour:
    node: Node
    rels: list[str]
    outgoing: bool = False
    incoming: bool = False


def link_graph(center: Node, edges: Sequence[Edge], *, label: str) -> SafeString:
    """A star: the memory in the middle, each linked memory once around it, arrows labelled with the relations.

    Two links to the same memory (``supersedes`` one way, ``temporal_evolution``
    the other) draw one node with both relations on one line, arrowheads at
    the ends the links point to. Labels wrap onto two lines and are kept
    inside the picture.
    """
    neighbours: dict[str, _Neighbour] = {}
    for edge in edges:
        found = neighbours.setdefault(edge.node.href or edge.node.label, _Neighbour(edge.node, []))
        if edge.rel not in found.rels:
            found.rels.append(edge.rel)
        found.outgoing |= edge.outgoing
        found.incoming |= not edge.outgoing
    shown = list(neighbours.values())[:12]
    # Two or fewer neighbours sit left and right of the memory; more go round it.
    width, height, radius = (640, 130, 115) if len(shown) <= 2 else (640, 320, 118)
    cx, cy = width / 2, height / 2 - 10
    parts = [
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="arrowhead"/></marker></defs>'
    ]
    for i, neighbour in enumerate(shown):
        angle = math.pi * i if len(shown) <= 2 else 2 * math.pi * i / len(shown) - math.pi / 2
        x, y = cx + 1.9 * radius * math.cos(angle), cy + radius * math.sin(angle)
        # Stop short of both ends so the arrowheads stay visible beside the circles.
        dx, dy = x - cx, y - cy
        length = math.hypot(dx, dy) or 1.0
        x1, y1 = cx + dx / length * 14, cy + dy / length * 14
        x2, y2 = x - dx / length * 11, y - dy / length * 11
        start = ' marker-start="url(#arrow)"' if neighbour.incoming else ""
        end = ' marker-end="url(#arrow)"' if neighbour.outgoing else ""
        parts.append(
            _tag(
                '<line class="edge {}" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"',
                " ".join(neighbour.rels),
                x1,
                y1,
                x2,
                y2,
            )
            + start
            + end
            + "/>"
        )
        parts.append(
            _tag(
                '<text class="rel" x="{:.1f}" y="{:.1f}">{}</text>',
                (cx + x) / 2,
                (cy + y) / 2 - 5,
                " · ".join(rel.replace("_", " ") for rel in neighbour.rels),
            )
        )
        parts.append(
            _tag(
                '<a href="{}"><circle class="node {}" cx="{:.1f}" cy="{:.1f}" r="7"/>',
                neighbour.node.href,
                neighbour.node.css,
                x,
                y,
            )
            + _label(neighbour.node.label, x, y + 20, width, "node-label")
            + "</a>"
        )
    parts.append(
        _tag('<circle class="node center {}" cx="{}" cy="{}" r="10"/>', center.css, cx, cy)
        + _label(center.label, cx, cy + 26, width, "node-label center")
    )
    return _svg(parts, label, width, height, role="group")


def _label(text: str, x: float, y: float, width: int, css: str) -> str:
    """``text`` on up to two centred lines, moved sideways so that no line runs off the picture."""
    lines = _wrap(text)
    half = max(len(line) for line in lines) * CHAR_WIDTH / 2
    x = min(max(x, half + 2), width - half - 2)
    spans = "".join(
        _tag('<tspan x="{:.1f}" dy="{}">{}</tspan>', x, 0 if i == 0 else 13, line) for i, line in enumerate(lines)
    )
    return (
        _tag('<text class="{}" x="{:.1f}" y="{:.1f}">', css, x, y)
        + spans
        + "<title>"
        + str(escape(text))
        + "</title></text>"
    )


def _wrap(text: str, limit: int = LABEL_CHARS) -> list[str]:
    """Word-wrap ``text`` at ``limit`` characters; a third line and beyond fold into an ellipsis."""
    lines: list[str] = []
    current = ""
    for word in text.split():
        candidate = f"{current} {word}".strip()
        if len(candidate) <= limit or not current:
            current = candidate
        else:
            lines.append(current)
            current = word
    if current:
        lines.append(current)
    if len(lines) > 2:
        lines = [lines[0], _short(f"{lines[1]} {lines[2]}", limit)]
    return [_short(line, limit) for line in lines] or [""]


def _short(text: str, limit: int = 34) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
