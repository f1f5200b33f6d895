"""The UI pages through the Django test client: login and roles, full page vs htmx fragment on
the same URL, operator actions landing as new versions and audit entries with the user."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.urls import reverse

from memories.models import AuditEntry, Entity, EntityAlias, Fact

ROOT = Path(__file__).resolve().parents[2]


def moved_fact(agent) -> Fact:
    """The current 'moved to São Paulo' version, whose chain starts in Curitiba."""
    return Fact.objects.current().get(agent=agent, text__contains="São Paulo", supersedes__isnull=False)


def rafael(agent) -> Entity:
    return Entity.objects.get(agent=agent, key="person:rafael")


def page_urls(agent) -> list[str]:
    fact, person = moved_fact(agent), rafael(agent)
    run = fact.source_event.runs.get()
    return [
        reverse("ui:overview"),
        reverse("ui:agent_home", args=["demo"]) + "?q=Rafael",
        reverse("ui:entity", args=["demo", person.id]),
        reverse("ui:fact", args=["demo", fact.id]),
        reverse("ui:traces", args=["demo"]) + "?kind=write&status=succeeded",
        reverse("ui:trace", args=["demo", run.id]),
        reverse("ui:time_travel", args=["demo"]) + "?as_of=2024-01-01",
        reverse("ui:graph", args=["demo"]) + f"?entity={person.id}&depth=2",
        reverse("ui:graph_panel", args=["demo", person.id]),
        reverse("ui:ask", args=["demo"]) + "?q=Where+does+Rafael+live%3F",
        reverse("ui:merge_suggestions", args=["demo"]),
    ]


def test_root_leads_to_the_ui_and_anonymous_users_to_the_login_page(client, demo):
    assert client.get("/")["Location"] == reverse("ui:overview")
    for url in page_urls(demo):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("ui:login") + "?next="), url
    login = client.get(reverse("ui:login"))
    assert login.status_code == 200 and b"Log in" in login.content


def test_login_page_logs_in_and_goes_to_the_overview(client, viewer):
    response = client.post(reverse("ui:login"), {"username": "vera", "password": "pw-vera"})
    assert response.status_code == 302 and response["Location"] == reverse("ui:overview")


def test_every_page_renders_in_full_and_as_an_htmx_fragment(viewer_client, demo):
    for url in page_urls(demo):
        full = viewer_client.get(url)
        assert full.status_code == 200, url
        assert b"<html" in full.content and b'class="sidebar"' in full.content, url
        fragment = viewer_client.get(url, HTTP_HX_REQUEST="true")
        assert fragment.status_code == 200, url
        assert b"<html" not in fragment.content and b'class="sidebar"' not in fragment.content, url
    boosted = viewer_client.get(reverse("ui:overview"), HTTP_HX_REQUEST="true", HTTP_HX_BOOSTED="true")
    assert b"<html" in boosted.content


def test_the_overview_counts_the_demo(viewer_client, demo):
    agent = viewer_client.get(reverse("ui:overview")).context["agents"].get(slug="demo")
    assert (agent.n_events, agent.n_facts_superseded) == (8, 1)
    assert agent.n_facts_current == Fact.objects.current().filter(agent=demo).count()


def test_a_user_without_a_role_is_refused(client, db, demo):
    from django.contrib.auth.models import User

    client.force_login(User.objects.create_user("nobody", "n@example.com", "x"))
    assert client.get(reverse("ui:overview")).status_code == 403


def test_a_viewer_reads_but_gets_403_on_every_action(viewer_client, demo):
    fact, person = moved_fact(demo), rafael(demo)
    page = viewer_client.get(reverse("ui:fact", args=["demo", fact.id]))
    assert b"Save as a new version" not in page.content
    actions = [
        (reverse("ui:fact_correct", args=["demo", fact.id]), {"text": "Rafael lives in Rio", "reason": "x"}),
        (reverse("ui:fact_retract", args=["demo", fact.id]), {"reason": "x"}),
        (reverse("ui:entity_alias_add", args=["demo", person.id]), {"alias": "Rafa"}),
        (reverse("ui:entity_merge", args=["demo", person.id]), {"merged": person.id + 1}),
        (reverse("ui:entity_unmerge", args=["demo", person.id]), {"merged": person.id + 1}),
        (reverse("ui:entity_alias_remove", args=["demo", person.id]), {"alias": "rafael"}),
        (reverse("ui:fact_reinstate", args=["demo", fact.supersedes_id]), {"reason": "x"}),
        (reverse("ui:entity_forget", args=["demo", person.id]), {"confirm": "on"}),
        (reverse("ui:merge_suggestion_merge", args=["demo", 1]), {}),
        (reverse("ui:merge_suggestion_dismiss", args=["demo", 1]), {}),
    ]
    for url, data in actions:
        assert viewer_client.post(url, data).status_code == 403, url
    assert viewer_client.get(reverse("ui:entity_forget", args=["demo", person.id])).status_code == 403
    assert Fact.objects.get(pk=fact.pk).is_active and not AuditEntry.objects.exists()


def test_the_chain_shows_both_versions_of_the_move(viewer_client, demo):
    fact = moved_fact(demo)
    response = viewer_client.get(reverse("ui:fact", args=["demo", fact.id]))
    versions = response.context["versions"]
    assert [v.decision for v in versions] == ["ADD", "UPDATE"]
    assert "Curitiba" in versions[0].fact.text and "São Paulo" in versions[1].fact.text
    assert versions[0].run is not None and "I live in Curitiba" in versions[0].fact.source_event.text
    assert "Curitiba → São Paulo" in versions[1].reason
    assert b"I moved to S\xc3\xa3o Paulo last week." in response.content


def test_an_operator_correction_is_a_new_version_audited_with_the_user(operator_client, demo):
    fact = moved_fact(demo)
    response = operator_client.post(reverse("ui:fact_correct", args=["demo", fact.id]),
                                    {"text": "Rafael lives in Campinas", "reason": "he said Campinas"})
    new = Fact.objects.get(supersedes=fact)
    assert response.status_code == 302 and response["Location"] == reverse("ui:fact", args=["demo", new.id])
    assert new.text == "Rafael lives in Campinas" and new.is_active and not Fact.objects.get(pk=fact.pk).is_active
    audit = AuditEntry.objects.get(action="fact_correct")
    assert audit.actor == "user:otto" and audit.reason == "he said Campinas"
    page = operator_client.get(response["Location"])
    assert [v.decision for v in page.context["versions"]] == ["ADD", "UPDATE", "OPERATOR"]
    assert b"Corrected: version" in page.content


def test_an_operator_retracts_adds_an_alias_and_merges(operator_client, demo):
    fact, person = moved_fact(demo), rafael(demo)
    operator_client.post(reverse("ui:fact_retract", args=["demo", fact.id]), {"reason": "not sure"})
    assert not Fact.objects.get(pk=fact.pk).is_active
    operator_client.post(reverse("ui:entity_alias_add", args=["demo", person.id]), {"alias": "Rafa"})
    assert EntityAlias.objects.filter(agent=demo, entity=person, alias="rafa").exists()
    guili = Entity.objects.get(agent=demo, key="person:guilherme_maturana")
    operator_client.post(reverse("ui:entity_merge", args=["demo", person.id]), {"merged": guili.id, "reason": "test"})
    assert Entity.objects.get(pk=guili.pk).merged_into_id == person.id
    assert set(AuditEntry.objects.values_list("action", "actor")) == {
        ("fact_retract", "user:otto"), ("alias_add", "user:otto"), ("entity_merge", "user:otto")}


def test_forget_lists_what_goes_then_removes_it_only_when_confirmed(operator_client, demo):
    ana = Entity.objects.get(agent=demo, key="person:ana")
    url = reverse("ui:entity_forget", args=["demo", ana.id])
    preview = operator_client.get(url)
    assert b"Ana loves jazz" in preview.content and b"spouse_of" in preview.content and b"<html" in preview.content
    fragment = operator_client.get(url, HTTP_HX_REQUEST="true")
    assert b"Ana loves jazz" in fragment.content and b"<html" not in fragment.content
    operator_client.post(url, {"reason": "asked"})  # box not ticked
    assert Entity.objects.filter(pk=ana.pk).exists()
    response = operator_client.post(url, {"confirm": "on", "reason": "asked"})
    assert response.status_code == 302 and not Entity.objects.filter(pk=ana.pk).exists()
    entry = AuditEntry.objects.get(action="entity_forget")
    assert entry.actor == "user:otto"
    # afterwards: the erasure receipt, linked from the agent's page, listed with the others
    receipt = reverse("ui:erasure", args=["demo", entry.after["receipt"]])
    assert response["Location"] == receipt
    page = operator_client.get(receipt)
    assert b"Erasure receipt" in page.content and b"memories_fact" in page.content and b"user:otto" in page.content
    assert b"person:forgotten-" in page.content and not re.search(rb"\bAna\b", page.content)
    assert b"<html" not in operator_client.get(receipt, HTTP_HX_REQUEST="true").content
    assert receipt.encode() in operator_client.get(reverse("ui:erasures", args=["demo"])).content
    assert receipt.encode() in operator_client.get(reverse("ui:agent_home", args=["demo"])).content


def test_time_travel_reads_the_agents_clock(viewer_client, demo):
    """The demo was said in 2024 and stored today: as of April 2024 the agent believed Curitiba."""
    old = Fact.objects.get(agent=demo, text__contains="Curitiba", supersedes__isnull=True)
    url = reverse("ui:time_travel", args=["demo"])
    response = viewer_client.get(url, {"as_of": "2024-04-15"})
    diff = response.context["diff"]
    changed = {(c.then.id, c.now.id) for c in diff["facts"].changed}
    assert (old.id, moved_fact(demo).id) in changed
    assert not any(c.then and "Guili is coming" in c.then.text for c in diff["facts"].rows)  # said in June
    assert any(c.now and "visit" in c.now.text for c in diff["facts"].added)
    assert b"badge-warn" in response.content and b"badge-added" in response.content
    # known now, about the world: in April he still lived in Curitiba ("I moved to São Paulo last
    # week", said on May 20), by late May in São Paulo
    world = viewer_client.get(url, {"valid_at": "2024-04-15"}).context["diff"]
    assert any(c.then and c.then.id == old.id for c in world["facts"].rows)
    late_may = viewer_client.get(url, {"valid_at": "2024-05-25"}).context["diff"]
    assert not any(c.then and c.then.id == old.id for c in late_may["facts"].rows)
    assert b"about the world on" in viewer_client.get(url, {"valid_at": "2024-04-15"}).content
    # before anything was said: everything is added since
    empty = viewer_client.get(url, {"as_of": "2024-01-01"}).context["diff"]
    assert not empty["facts"].unchanged and not empty["facts"].changed and empty["facts"].added
    # the slider's stops are when the messages were said, not when they were stored
    stops = [m["t"] for m in response.context["moments"]]
    assert len(stops) == 8 and stops[0].startswith("2024-03-01T09:00:00") and stops[-1].startswith("2024-06-15")
    # the chosen clocks stay in the links
    assert b"as_of=2024-04-15T23%3A59%3A59.999" in response.content


def test_the_chain_shows_three_clocks_and_an_operator_reinstates(operator_client, demo):
    fact = moved_fact(demo)
    old = fact.supersedes
    page = operator_client.get(reverse("ui:fact", args=["demo", fact.id])).content.decode()
    assert page.count('class="clock-world"') == 2 and page.count('class="clock-agent"') == 2
    assert page.count('class="clock-db"') == 2 and "learned on 2024-05-20" in page  # Curitiba's end
    assert "Reinstate v1" in page and "reopen_previous" in page
    response = operator_client.post(reverse("ui:fact_reinstate", args=["demo", old.id]), {"reason": "he stayed"})
    new = Fact.objects.current().get(agent=demo, supersedes=fact)
    assert response["Location"] == reverse("ui:fact", args=["demo", new.id]) and "Curitiba" in new.text
    assert AuditEntry.objects.get(action="fact_reinstate").actor == "user:otto"
    chain = operator_client.get(response["Location"]).context["versions"]
    assert len(chain) == 3 and chain[-1].fact.is_active
    assert chain[-1].decision == "REINSTATED" and "he stayed" in chain[-1].reason


def test_correct_with_valid_from_and_retract_reopening_the_previous(operator_client, demo):
    fact = moved_fact(demo)
    operator_client.post(reverse("ui:fact_correct", args=["demo", fact.id]),
                         {"text": "Rafael lives in Campinas", "reason": "Campinas", "valid_from": "2024-06-01T00:00"})
    new = Fact.objects.get(supersedes=fact)
    assert new.valid_from.isoformat() == "2024-06-01T00:00:00+00:00"
    response = operator_client.post(reverse("ui:fact_retract", args=["demo", new.id]),
                                    {"reason": "no, São Paulo", "reopen_previous": "on"})
    back = Fact.objects.current().get(agent=demo, supersedes=new)
    assert "São Paulo" in back.text and response["Location"] == reverse("ui:fact", args=["demo", back.id])


def test_alias_remove_move_and_unmerge(operator_client, demo):
    person = rafael(demo)
    guili = Entity.objects.get(agent=demo, key="person:guilherme_maturana")
    url = reverse("ui:entity", args=["demo", person.id])
    operator_client.post(reverse("ui:entity_alias_add", args=["demo", person.id]), {"alias": "Guili"})
    assert EntityAlias.objects.get(agent=demo, alias="guili").entity_id == guili.id  # taken: refused
    operator_client.post(reverse("ui:entity_alias_add", args=["demo", person.id]), {"alias": "Guili", "move": "on"})
    assert EntityAlias.objects.get(agent=demo, alias="guili").entity_id == person.id
    operator_client.post(reverse("ui:entity_alias_remove", args=["demo", person.id]), {"alias": "guili"})
    assert not EntityAlias.objects.filter(agent=demo, alias="guili").exists()
    operator_client.post(reverse("ui:entity_merge", args=["demo", person.id]), {"merged": guili.id, "reason": "t"})
    page = operator_client.get(url).content.decode()
    assert 'id="merged"' in page and "Unmerge" in page
    assert "Unmerge" in operator_client.get(reverse("ui:entity", args=["demo", guili.id])).content.decode()
    response = operator_client.post(reverse("ui:entity_unmerge", args=["demo", person.id]), {"merged": guili.id})
    assert response["Location"] == reverse("ui:entity", args=["demo", guili.id])
    assert Entity.objects.get(pk=guili.pk).merged_into_id is None
    assert {a for a, in AuditEntry.objects.values_list("action")} >= {"alias_move", "alias_remove", "entity_unmerge"}


def test_graph_data_and_markup_from_memory_is_escaped(viewer_client, demo):
    from memories.services.write import memory_write

    memory_write(agent=demo, message="My cat <img src=x onerror=alert(1)> is called Bolt.", speaker_name="Rafael")
    data = viewer_client.get(reverse("ui:graph_data", args=["demo"]), {"entity": rafael(demo).id}).json()
    assert {n["label"] for n in data["nodes"]} >= {"Rafael", "São Paulo", "Ana"}
    assert all({"source", "target", "rel_type"} <= set(e) for e in data["edges"])
    page = viewer_client.get(reverse("ui:agent_home", args=["demo"]), {"q": "onerror"})
    assert b"<img src=x" not in page.content and b"&lt;img src=x onerror=alert(1)&gt;" in page.content


def test_ask_shows_scores_and_links_the_trace(viewer_client, demo):
    response = viewer_client.get(reverse("ui:ask", args=["demo"]), {"q": "Where does Rafael live?", "limit": 5})
    result = response.context["result"]
    assert result.facts and result.trace_id
    assert b"S\xc3\xa3o Paulo" in response.content and b"semantic" in response.content
    assert reverse("ui:trace", args=["demo", result.trace_id]).encode() in response.content


def test_the_traces_list_takes_the_apis_filters(viewer_client, demo):
    from memories.models import PipelineRun

    viewer_client.get(reverse("ui:ask", args=["demo"]), {"q": "Where does Rafael live?"})  # a retrieval run
    url = reverse("ui:traces", args=["demo"])

    def listed(**query):
        return {r.id for r in viewer_client.get(url, query).context["runs"]}

    def stored(**filters):
        return set(PipelineRun.objects.filter(agent=demo, **filters).values_list("id", flat=True))

    assert listed() == stored() and len(stored(kind="write")) == 8
    assert listed(kind="retrieve") == stored(kind="retrieve") and len(listed(kind="retrieve")) == 1
    assert listed(kind="write", status="succeeded") == stored(kind="write", status="succeeded")
    assert listed(created_after="2999-01-01T00:00:00Z") == set()
    assert listed(kind="bogus") == listed()  # a value that does not validate narrows nothing
    assert b'<option value="retrieve" selected>' in viewer_client.get(url, {"kind": "retrieve"}).content


def test_a_retrievals_trace_lists_its_items_by_rank(viewer_client, demo):
    from memories.models import PipelineRun

    result = viewer_client.get(reverse("ui:ask", args=["demo"]), {"q": "Where does Rafael live?"}).context["result"]
    url = reverse("ui:trace", args=["demo", result.trace_id])
    page = viewer_client.get(url)
    assert [item.stored for item in page.context["items"]] == [str(key) for key in result.ranking]
    assert reverse("ui:fact", args=["demo", result.facts[0].id]).encode() in page.content
    # a key whose row is gone, and text that is no key, stay listed as they were stored
    run = PipelineRun.objects.get(pk=result.trace_id)
    ranking = [*run.result["ranking"], "f:999999", "x:1"]
    PipelineRun.objects.filter(pk=run.pk).update(result={**run.result, "ranking": ranking})
    page = viewer_client.get(url)
    assert b"f:999999 (no longer stored)" in page.content and b"x:1 (no longer stored)" in page.content


def test_static_files_are_served_by_the_app(client, db):
    for path in ("/static/vendor/htmx/htmx.min.js", "/static/vendor/cytoscape/cytoscape.min.js",
                 "/static/dashboard/app.css", "/static/dashboard/swap_errors.js", "/static/admin/css/base.css"):
        response = client.get(path)
        assert response.status_code == 200, path
        assert b"".join(response.streaming_content), path


def test_vendored_files_match_their_pinned_checksums():
    done = subprocess.run([sys.executable, "scripts/vendor.py", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "htmx.org 2.0." in done.stdout


@pytest.mark.parametrize("value, expected", [
    ("2024-05-01", "2024-05-01T23:59:59.999999+00:00"), ("2024-05-01T10:00", "2024-05-01T10:00:00+00:00"),
    ("2024-05-01T10:00:00+02:00", "2024-05-01T10:00:00+02:00"), ("yesterday", None), ("", None),
    ("2024-13-45", None),
])
def test_as_of_parsing(value, expected):
    from dashboard.pages import parse_moment

    moment = parse_moment(value)
    assert (moment.isoformat() if moment else None) == expected
