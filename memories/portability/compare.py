"""What two exports of one agent's memory have in common when they are the same memory: an
export of an agent and the export of its import into another database (or under another slug)
differ only in ids, in when each file was made, in the slug, and in the audit entry the import
left. `export_content` sets those aside, so equal content means nothing was lost or changed.
Pure functions."""

from __future__ import annotations

import json
from collections.abc import Iterable

from memories.portability.format import IMPORT_ACTION, ROW_TYPES
from memories.portability.remap import AGENT, remap_stored_json


def export_content(lines: Iterable[str | bytes]) -> list[dict]:
    """The rows of an export with each id — the row's own and every reference to it, in columns
    and in stored JSON — replaced by the row's position among the rows of its type, the header
    reduced to the agent (without its id and slug), and the import's audit entries left out."""
    rows = [json.loads(line) for line in lines if line.strip()]
    if not rows:
        return []
    header, body = rows[0], rows[1:]
    positions: dict[str, dict[int, int]] = {AGENT: {header["agent"]["id"]: 0}}
    for row in body:
        if "id" in row:
            seen = positions.setdefault(row["type"], {})
            seen[row["id"]] = len(seen)

    def position(kind: str, value: int) -> int | None:
        return positions.get(kind, {}).get(value)

    out = [{"agent": {k: v for k, v in header["agent"].items() if k not in ("id", "slug")}}]
    for row in body:
        if row["type"] == "audit" and row["action"] == IMPORT_ACTION:
            continue
        spec = ROW_TYPES[row["type"]]
        row = remap_stored_json(row["type"], row, position)
        for f in spec.fields:
            if f.kind in ("id", "ref") and row.get(f.name) is not None:
                row[f.name] = position(row["type"] if f.kind == "id" else f.ref, row[f.name])
        out.append(row)
    return out
