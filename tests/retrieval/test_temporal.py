from datetime import UTC, datetime

from memories.temporal import resolve_temporal, statement_start

NOW = datetime(2024, 6, 12, 15, 30, tzinfo=UTC)  # a Wednesday


def window(q):
    w = resolve_temporal(q, NOW)
    return (w.start.date().isoformat(), w.end.date().isoformat()) if w else None


def test_relative_days():
    assert window("what did I do yesterday?") == ("2024-06-11", "2024-06-12")
    assert window("anything today") == ("2024-06-12", "2024-06-13")


def test_last_week_is_the_previous_monday_to_monday():
    assert window("where was I last week") == ("2024-06-03", "2024-06-10")


def test_n_days_ago_is_a_window_around_that_day():
    start, end = window("what happened 3 days ago")
    assert start <= "2024-06-09" < end


def test_month_and_year_expressions():
    assert window("what happened in May 2023?") == ("2023-05-01", "2023-06-01")
    assert window("trips in 2022") == ("2022-01-01", "2023-01-01")
    assert window("on 8 May, 2023") == ("2023-05-08", "2023-05-09")
    assert window("last month") == ("2024-05-01", "2024-06-01")


def test_no_expression_gives_none():
    assert window("where does Ricardo live?") is None


def test_a_bare_month_of_a_plan_is_the_next_one_so_the_state_has_not_begun():
    said = datetime(2023, 2, 1, 9, 0, tzinfo=UTC)
    assert statement_start("moved to Braga in June", said).year == 2022  # the latest June
    assert statement_start("is moving to Braga in June", said) is None  # June 2023: not begun when said


def test_every_written_form_of_a_month_resolves():
    """"sept" as people write it once crashed a write (a month the pattern took had no number)."""
    from memories.temporal import _MONTH

    forms = _MONTH.strip("()").split("|")
    for form in forms:
        for said in (form, form.capitalize()):
            assert window(f"what happened in {said} 2023?") is not None, said
            assert window(f"on 3 {said} 2023") is not None, said
            assert statement_start(f"moved to Leeds in {said}", NOW) is not None, said
    assert window("since sept 2021") == ("2021-09-01", "2021-10-01")
