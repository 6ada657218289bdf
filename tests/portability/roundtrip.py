"""Comparing two exports of the same workspace: equal up to a consistent renaming of ids."""

from __future__ import annotations

import json
from typing import Any

from django.core.management import call_command

INT_TYPES = {"link", "event", "answer", "tolerance", "tolerance_change"}
INT_TABLES = {
    "memories.link": "link",
    "memories.event": "event",
    "conflicts.answer": "answer",
    "conflicts.tolerance": "tolerance",
    "conflicts.tolerancechange": "tolerance_change",
    "conflicts.cardfact": "cardfact",
}


def export(slug: str, tmp_path: Any, name: str) -> str:
    path = tmp_path / name
    call_command("export_workspace", slug, output=str(path))
    return str(path)


def rows(path: str) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def renamed(first: list[dict[str, Any]], second: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``first`` with each row's id (and every mention of it) replaced by the id its twin in ``second`` got."""
    assert [r["type"] for r in first] == [r["type"] for r in second]
    uuids: dict[str, str] = {}
    ints: dict[str, dict[int, int]] = {}
    for a, b in zip(first, second, strict=True):
        if "id" not in a:
            continue
        for fa, fb in zip(a.get("facts", []), b.get("facts", []), strict=True):
            ints.setdefault("cardfact", {})[fa["id"]] = fb["id"]
        if a["type"] in INT_TYPES:
            ints.setdefault(a["type"], {})[a["id"]] = b["id"]
        else:
            uuids[a["id"]] = b["id"]

    def deep(value: Any) -> Any:
        if isinstance(value, str):
            return uuids.get(value, value)
        if isinstance(value, list):
            return [deep(v) for v in value]
        if isinstance(value, dict):
            return {k: deep(v) for k, v in value.items()}
        return value

    out = []
    for row in first:
        row = deep(row)
        kind = row["type"]
        if kind in INT_TYPES:
            row["id"] = ints[kind][row["id"]]
        if kind == "event":
            if row["undoes"] is not None:
                row["undoes"] = ints["event"][row["undoes"]]
            for change in row["changes"]:
                table = INT_TABLES.get(change["model"])
                if table and change["pk"] in ints.get(table, {}):
                    change["pk"] = ints[table][change["pk"]]
        if kind == "card":
            for fact in row["facts"]:
                fact["id"] = ints["cardfact"][fact["id"]]
            row["fact_set_key"] = ",".join(sorted(uuids.get(i, i) for i in row["fact_set_key"].split(",")))
        if "agent_key" in row:
            row["agent_key"] = None  # keys do not travel (docs/PORTABILITY.md)
        if kind == "header":
            row["workspace"]["slug"] = second[0]["workspace"]["slug"]
        out.append(row)
    return out
