"""The UI pages through the Django test client: login and roles, full page vs htmx fragment on
the same URL, operator actions landing as new versions and audit entries with the user."""

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
        (reverse("ui:entity_forget", args=["demo", person.id]), {"confirm": "on"}),
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
    assert AuditEntry.objects.get(action="entity_forget").actor == "user:otto"


def test_time_travel_marks_what_changed_since(viewer_client, demo):
    old = Fact.objects.get(agent=demo, text__contains="Curitiba", supersedes__isnull=True)
    between = old.invalidated_at - (old.invalidated_at - old.recorded_at) / 2
    response = viewer_client.get(reverse("ui:time_travel", args=["demo"]), {"as_of": between.isoformat()})
    diff = response.context["diff"]
    assert old in diff["facts"].superseded and moved_fact(demo) in diff["facts"].added
    assert b"badge-superseded" in response.content and b"badge-added" in response.content


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


def test_static_files_are_served_by_the_app(client, db):
    for path in ("/static/vendor/htmx/htmx.min.js", "/static/vendor/cytoscape/cytoscape.min.js",
                 "/static/ui/app.css", "/static/admin/css/base.css"):
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
    from memories.ui import parse_moment

    moment = parse_moment(value)
    assert (moment.isoformat() if moment else None) == expected
