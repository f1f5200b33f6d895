"""References to other rows inside the JSON an agent stores — a write job's result and trace, a
merge record, an audit entry's before and after, a merge suggestion's evidence — rewritten from
one id space to another: from the exporting database's ids to the importing one's, or to
positions in a file when two exports are compared. Pure functions.

Where an id sits is data (the rule tables below), matched on the path of keys that leads to it
("[]" stands for any item of a list, "[0]" for its first). An id the lookup does not know — a row
since deleted (a forget deletes facts a job's result still names) or not the agent's — becomes
None where it is a value of its own and is dropped from a list of ids.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

# The id spaces a reference points into: the row types of the file that carry an `id`.
AGENT, ENTITY, EVENT, FACT, LINK = "agent", "entity", "event", "fact", "fact_link"
RELATIONSHIP, MERGE, SUGGESTION, JOB, RECEIPT = (
    "relationship", "entity_merge", "merge_suggestion", "job", "erasure_receipt")

Lookup = Callable[[str, int], "int | None"]
Rules = Mapping[tuple[str, ...], str]

# A write job's result (a WriteResult, with its trace) and its steps' data; matched on the end of
# the path, so a step's data reads the same inside the result's trace as in its own row.
WRITE_RULES: Rules = {
    ("event_id",): EVENT,
    ("run_id",): JOB,
    ("fact_id",): FACT,
    ("previous_fact_id",): FACT,
    ("evidence_fact_id",): FACT,
    ("target_id",): FACT,  # a reconciliation decision's fact
    ("entity_id",): ENTITY,
    ("entities_resolved", "[]", "id"): ENTITY,
    ("relationships", "[]", "id"): RELATIONSHIP,
    ("relationships_closed", "[]"): RELATIONSHIP,
    ("profiles_refreshed", "[]"): ENTITY,
    ("narrowed", "[]"): FACT,
    ("ended", "[]"): FACT,
    ("corrections", "[]", "facts", "[]"): FACT,
    ("corrections", "[]", "edges", "[]"): RELATIONSHIP,
}

# What a merge moved (memories.services.entities.entity_merge), read back by entity_unmerge.
MOVED_RULES: Rules = {
    ("facts", "[]"): FACT,
    ("links", "[]"): LINK,
    ("links_dropped", "[]", "[0]"): FACT,  # [fact id, was primary]
    ("relationships", "[]", "[0]"): RELATIONSHIP,  # [old id, new id, was source, was target]
    ("relationships", "[]", "[1]"): RELATIONSHIP,
    ("relationships_dropped", "[]"): RELATIONSHIP,
}

SUGGESTION_RULES: Rules = {("shared_neighbours", "[]"): ENTITY}

_FACT_STATE: Rules = {("id",): FACT, ("entity",): ENTITY}  # memories.services.facts.fact_state
# An audit entry's before and after, by action (the services that write them).
AUDIT_RULES: Mapping[str, Rules] = {
    "fact_correct": _FACT_STATE,
    "fact_retract": _FACT_STATE,
    "fact_reinstate": _FACT_STATE,
    "fact_dedupe": {("duplicates", "[]"): FACT, ("kept",): FACT},
    "alias_move": {("entity",): ENTITY},
    "entity_merge": {("merged",): ENTITY},
    "entity_unmerge": {("merged_into",): ENTITY},
    "entity_forget": {("receipt",): RECEIPT},
    "merge_suggestion_dismiss": {("entity_a",): ENTITY, ("entity_b",): ENTITY},
    "event_write": {("job",): JOB},
}

# An audit entry's object, by its `object_type` (the model's name in lower case); other objects
# (API keys) are not part of an export.
AUDIT_OBJECTS: Mapping[str, str] = {
    "agent": AGENT, "entity": ENTITY, "event": EVENT, "fact": FACT, "relationship": RELATIONSHIP,
    "entitymerge": MERGE, "mergesuggestion": SUGGESTION, "pipelinerun": JOB, "erasurereceipt": RECEIPT,
}

INPUT_REF_PREFIX = "event:"  # a write job's input_ref names its event


def is_id(value) -> bool:
    return type(value) is int and value > 0


class _Matcher:
    """The rules indexed by the last element of their path, so most values cost one dict miss."""

    def __init__(self, rules: Rules, *, suffix: bool):
        self.suffix = suffix
        self.by_last: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        for pattern, kind in rules.items():
            self.by_last.setdefault(pattern[-1], []).append((pattern, kind))

    def kind(self, path: tuple[str, ...]) -> tuple[str, bool] | None:
        """(kind, in a list of ids) of the id at `path`, or None."""
        last = path[-1]
        candidates = self.by_last.get(last, [])
        if last.startswith("["):
            candidates = [*candidates, *self.by_last.get("[]", [])]
        for pattern, kind in candidates:
            if len(path) < len(pattern) or (not self.suffix and len(path) != len(pattern)):
                continue
            tail = path[len(path) - len(pattern):]
            if all(p == t or (p == "[]" and t.startswith("[")) for p, t in zip(pattern, tail, strict=True)):
                return kind, pattern[-1] == "[]"
        return None


_WRITE = _Matcher(WRITE_RULES, suffix=True)
_MOVED = _Matcher(MOVED_RULES, suffix=False)
_SUGGESTION = _Matcher(SUGGESTION_RULES, suffix=False)
_AUDIT = {action: _Matcher(rules, suffix=False) for action, rules in AUDIT_RULES.items()}
_NOTHING = _Matcher({}, suffix=False)


def remap_json(value, rules: Rules, lookup: Lookup, *, suffix: bool = False):
    """`value` with every id the rules place rewritten through `lookup` (see the module)."""
    return _walk(value, (), _Matcher(rules, suffix=suffix), lookup)


def _walk(value, path: tuple[str, ...], matcher: _Matcher, lookup: Lookup):
    if isinstance(value, dict):
        return {key: _walk(item, (*path, key), matcher, lookup) for key, item in value.items()}
    if isinstance(value, list):
        out = []
        for index, item in enumerate(value):
            child = (*path, f"[{index}]")
            found = matcher.kind(child) if is_id(item) else None
            if found is None:
                out.append(_walk(item, child, matcher, lookup))
                continue
            new = lookup(found[0], item)
            if new is not None or not found[1]:
                out.append(new)
        return out
    if path and is_id(value):
        found = matcher.kind(path)
        if found is not None:
            return lookup(found[0], value)
    return value


def audit_object(object_type: str, object_id, lookup: Lookup) -> int | None:
    """An audit entry's object id (stored as text, written as a number) in the other id space."""
    kind = AUDIT_OBJECTS.get(object_type)
    if isinstance(object_id, str) and object_id.isascii() and object_id.isdigit() and len(object_id) <= 18:
        object_id = int(object_id)
    return lookup(kind, object_id) if kind and is_id(object_id) else None


def input_ref(value: str, lookup: Lookup) -> str:
    """A write job's `input_ref` ("event:12") naming the event in the other id space."""
    number = value[len(INPUT_REF_PREFIX):] if value.startswith(INPUT_REF_PREFIX) else ""
    if not (number.isascii() and number.isdigit() and len(number) <= 18):
        return value
    new = lookup(EVENT, int(number))
    return f"{INPUT_REF_PREFIX}{new}" if new is not None else ""


def remap_stored_json(row_type: str, values: dict, lookup: Lookup) -> dict:
    """The row's JSON columns (and the audit's object, a job's input_ref) in the other id space;
    `values` holds the row by its file field names. Returns a new dict."""
    out = dict(values)
    if row_type == JOB:
        out["result"] = _walk(values["result"], (), _WRITE, lookup)
        out["input_ref"] = input_ref(values["input_ref"], lookup)
    elif row_type == "step":
        out["data"] = _walk(values["data"], (), _WRITE, lookup)
    elif row_type == MERGE:
        out["moved"] = _walk(values["moved"], (), _MOVED, lookup)
    elif row_type == SUGGESTION:
        out["reasons"] = _walk(values["reasons"], (), _SUGGESTION, lookup)
    elif row_type == "audit":
        matcher = _AUDIT.get(values["action"], _NOTHING)
        out["before"] = _walk(values["before"], (), matcher, lookup)
        out["after"] = _walk(values["after"], (), matcher, lookup)
        out["object_id"] = audit_object(values["object_type"], values["object_id"], lookup)
    return out
