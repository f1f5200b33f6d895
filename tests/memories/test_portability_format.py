"""The export format read without a database: a file the importer would store half of is refused
naming its line and what is wrong; ids inside stored JSON follow their rows; two exports of one
memory compare equal whatever their ids."""

from __future__ import annotations

import json

import pytest

from memories.errors import InvalidExportFile, UnsupportedExportVersion
from memories.portability.compare import export_content
from memories.portability.format import FORMAT, VERSION
from memories.portability.records import ExportReader
from memories.portability.remap import FACT, JOB, remap_stored_json

T = "2024-03-01T10:00:00+00:00"
LATER = "2024-04-01T10:00:00+00:00"


def header(**counts) -> dict:
    return {"format": FORMAT, "version": VERSION, "exported_at": LATER, "counts": counts or None,
            "agent": {"id": 7, "slug": "ines", "name": "Inês's assistant", "created_at": T}}


def entity(i: int, name: str, **extra) -> dict:
    return {"type": "entity", "id": i, "key": f"person:{name.lower()}", "entity_type": "person",
            "display_name": name, "created_at": T, "updated_at": T, **extra}


def fact(i: int, entity_id: int, text: str, **extra) -> dict:
    return {"type": "fact", "id": i, "entity": entity_id, "text": text, "valid_from": T, "learned_at": T,
            "recorded_at": T, **extra}


def event(i: int, text: str, **extra) -> dict:
    return {"type": "event", "id": i, "speaker": "Inês", "text": text, "occurred_at": T, "recorded_at": T, **extra}


def lines(*rows: dict) -> list[str]:
    return [json.dumps(r, ensure_ascii=False) + "\n" for r in rows]


def read_all(rows: list[str]):
    reader = ExportReader(rows)
    records = list(reader.records())
    reader.finish()
    return reader, records


def refused(rows: list[str]) -> InvalidExportFile:
    with pytest.raises(InvalidExportFile) as caught:
        read_all(rows)
    return caught.value


GOOD = [header(entity=2, event=1, fact=2), entity(10, "Inês"), entity(11, "Tiago"),
        event(20, "I moved to Braga."), fact(30, 10, "Inês lives in Braga", source_event=20),
        fact(31, 11, "Tiago plays the viola")]


def test_a_good_file_reads_with_defaults_and_parsed_times():
    reader, records = read_all(lines(*GOOD))
    assert reader.header.agent["slug"] == "ines"
    assert [r.type for r in records] == ["entity", "entity", "event", "fact", "fact"]
    first_fact = records[3]
    assert first_fact.line == 5 and first_fact.values["valid_from"].isoformat() == T
    assert first_fact.values["confidence"] == 0.95 and first_fact.values["supersedes"] is None  # the defaults
    assert records[2].values["params"] == {} and records[2].values["embedded"] is True


@pytest.mark.parametrize(("rows", "line", "says"), [
    ([], None, "the file is empty"),
    ([{"rows": 3}], 1, "not the header of an agent export"),
    ([header(), {"type": "fact"}], 2, "'id' is missing"),
    ([header(), entity(10, "Inês", importance="high")], 2, "'importance' must be a finite number"),
    ([header(), entity(10, "Inês", created_at="yesterday")], 2, "'created_at' is not an ISO-8601 time"),
    ([header(), entity(10, "Inês", created_at="2024-03-01T10:00:00")], 2, "must give its offset from UTC"),
    ([header(), entity(10, "Inês", colour="red")], 2, "has no field 'colour'"),
    ([header(), entity(10, "Inês", entity_type="Person")], 2, "'entity_type' must be lower-case"),
    ([header(), entity(10, "Inês"), entity(10, "Tiago")], 3, "a second entity with id 10 (the first is on line 2)"),
    ([header(), entity(10, "Inês"), entity(11, "Inês")], 3, "entity key repeats the one on line 2"),
    ([header(), event(20, "hi"), entity(10, "Inês")], 3, "entity row after the event rows"),
    ([header(), entity(10, "Inês"), fact(30, 10, "x", valid_to="2024-01-01T00:00:00+00:00")], 3,
     "'valid_to' must not be before valid_from"),
    ([header(), entity(10, "Inês"), fact(30, 10, "x", confidence=1.5)], 3, "'confidence' must be between 0 and 1"),
    ([header(), entity(10, "Inês"), fact(30, 10, "x", supersedes=30)], 3, "must not be the fact itself"),
    ([header(), {"type": "step", "job": 1, "order": 1, "name": "upsert", "tokens_in": 2**40}], 2,
     "'tokens_in' must be between 0 and 2147483647"),
    ([header(), entity(10, "Inês"), fact(30, 10, "x\u0000y")], 3, "cannot be stored"),
])
def test_a_bad_row_is_refused_naming_its_line_and_what_is_wrong(rows, line, says):
    error = refused(lines(*rows))
    assert says in error.message
    assert error.extra["line"] == line
    if line:
        assert error.message.startswith(f"line {line}: ")


def test_a_file_cut_in_the_middle_of_a_line_names_that_line():
    text = "".join(lines(*GOOD))
    error = refused(text[: text.index("Tiago plays") + 5].splitlines(keepends=True))
    assert error.extra["line"] == 6 and "not a complete JSON object" in error.message


def test_a_file_cut_between_lines_is_caught_by_the_counts_of_its_header():
    error = refused(lines(*GOOD[:-1]))
    assert "with 1 fact rows where its header announces 2" in error.message and "truncated" in error.message


def test_an_unknown_version_is_refused_as_such():
    with pytest.raises(UnsupportedExportVersion) as caught:
        ExportReader(lines({**header(), "version": 2}))
    assert caught.value.code == "unsupported_export_version" and "version 2" in caught.value.message


def test_ids_in_a_job_result_and_an_audit_entry_follow_their_rows_and_dangling_ones_go():
    new = {FACT: {30: 300, 31: 310}, JOB: {40: 400}}

    def lookup(kind, value):
        return new.get(kind, {}).get(value)

    result = {"run_id": 40, "facts_added": [{"fact_id": 30, "text": "Inês lives in Braga"}],
              "facts_updated": [{"fact_id": 31, "previous_fact_id": 29}],
              "trace": [{"name": "upsert", "data": {"ended": [29, 31], "count": 3}}]}
    job = remap_stored_json("job", {"result": result, "input_ref": "event:20"}, lookup)
    assert job["result"]["run_id"] == 400
    assert job["result"]["facts_added"][0] == {"fact_id": 300, "text": "Inês lives in Braga"}
    assert job["result"]["facts_updated"][0] == {"fact_id": 310, "previous_fact_id": None}  # 29 was deleted
    assert job["result"]["trace"][0]["data"] == {"ended": [310], "count": 3}  # a list of ids drops it
    assert job["input_ref"] == ""  # event 20 is not known here
    audit = remap_stored_json("audit", {"action": "fact_dedupe", "object_type": "fact", "object_id": "31",
                                        "before": {"duplicates": [30, 29]}, "after": {"kept": 31}}, lookup)
    assert audit["before"] == {"duplicates": [300]} and audit["after"] == {"kept": 310}
    assert audit["object_id"] == 310


def test_a_merge_record_keeps_its_positions():
    moved = {"facts": [30], "links_dropped": [[29, True]], "relationships": [[50, 51, True, False]],
             "aliases": ["ines"]}
    out = remap_stored_json("entity_merge", {"moved": moved}, lambda kind, value: value * 10 if value != 29 else None)
    assert out["moved"] == {"facts": [300], "links_dropped": [[None, True]], "relationships": [[500, 510, True, False]],
                            "aliases": ["ines"]}


def test_two_exports_of_one_memory_compare_equal_and_a_change_shows():
    moved = [{**header(), "exported_at": "2025-01-01T00:00:00+00:00", "agent": {**header()["agent"], "id": 99}},
             entity(110, "Inês"), entity(111, "Tiago"), event(120, "I moved to Braga."),
             fact(130, 110, "Inês lives in Braga", source_event=120), fact(131, 111, "Tiago plays the viola")]
    assert export_content(lines(*GOOD)) == export_content(lines(*moved))
    swapped = [*moved[:4], fact(130, 111, "Inês lives in Braga", source_event=120), moved[5]]
    assert export_content(lines(*GOOD)) != export_content(lines(*swapped))
