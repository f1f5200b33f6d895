"""The UI in a real browser (Debian's Chromium through Playwright) against a live server with the
demo: styles load, Swagger renders, the graph draws and expands, a chain shows the move, a
correction made in the page becomes a new version, a trace shows its steps, merge suggestions are
merged and dismissed in place, and markup stored in memory stays text. Each test saves a
screenshot under var/test-output/ui/."""

import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # ORM calls beside Playwright's event loop

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"]
OUT = Path(__file__).resolve().parents[2] / "var" / "test-output" / "ui"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not shutil.which(CHROMIUM), reason="needs Debian's chromium (apt-get install chromium)"),
]


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def live_demo(transactional_db, embedder, live_server):
    from django.core.management import call_command

    from memories.models import Agent

    call_command("load_demo", "--only", "demo", stdout=open(os.devnull, "w"))  # noqa: SIM115
    return Agent.objects.get(slug="demo")


@pytest.fixture
def page(browser, live_server, live_demo, request):
    """A logged-in page (admin / anamnesis-demo through the login form); its dialogs are recorded."""
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    tab = context.new_page()
    tab.dialogs = []
    tab.on("dialog", lambda dialog: (tab.dialogs.append(dialog.message), dialog.dismiss()))
    tab.goto(live_server.url + "/")
    tab.fill("#id_username", "admin")
    tab.fill("#id_password", "anamnesis-demo")
    tab.click("button[type=submit]")
    tab.wait_for_url("**/ui/")
    yield tab
    context.close()


def shot(tab, name: str, *, full_page: bool = True) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=str(OUT / f"{name}.png"), full_page=full_page)


def styled(tab, selector: str, prop: str) -> str:
    return tab.eval_on_selector(selector, f"el => getComputedStyle(el).{prop}")


def test_root_login_overview_and_admin_are_styled(browser, live_server, live_demo):
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    tab = context.new_page()
    tab.goto(live_server.url + "/")
    assert "/ui/login/" in tab.url
    assert styled(tab, ".login-card", "borderTopLeftRadius") == "12px"  # the UI's stylesheet loaded
    shot(tab, "login")
    tab.fill("#id_username", "admin")
    tab.fill("#id_password", "anamnesis-demo")
    tab.click("button[type=submit]")
    tab.wait_for_url("**/ui/")
    assert tab.locator(".stat b").first.inner_text() == "8"
    assert tab.evaluate("typeof window.htmx") == "object"  # vendored htmx served
    shot(tab, "overview")
    tab.goto(live_server.url + "/admin/")
    assert styled(tab, "#header", "backgroundColor") not in ("rgba(0, 0, 0, 0)", "transparent")
    shot(tab, "admin")
    context.close()


def test_a_login_locked_out_by_guessing_says_why_and_for_how_long(browser, live_server, transactional_db):
    from django.conf import settings
    from django.contrib.auth.models import User

    User.objects.create_superuser("admin", "admin@example.com", "right-password")
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    tab = context.new_page()
    for n in range(settings.AXES_FAILURE_LIMIT):
        tab.goto(live_server.url + "/ui/login/")
        tab.fill("#id_username", "admin")
        tab.fill("#id_password", f"guess-{n}")
        tab.click("button[type=submit]")
    assert "Too many failed logins" in tab.inner_text("main")
    assert styled(tab, ".login-card", "borderTopLeftRadius") == "12px"
    shot(tab, "login_locked_out")
    context.close()


def test_swagger_renders(page, live_server):
    page.goto(live_server.url + "/api/v1/docs/")
    page.wait_for_selector(".swagger-ui .info .title", timeout=15000)
    page.wait_for_selector(".opblock")
    assert "Anamnesis API" in page.inner_text(".swagger-ui .info .title")
    assert page.locator(".opblock").count() > 5
    shot(page, "swagger", full_page=False)


def _drawn(page) -> tuple[int, int]:
    page.wait_for_function("document.getElementById('cy').dataset.nodes !== ''", timeout=15000)
    data = page.eval_on_selector("#cy", "el => [el.dataset.nodes, el.dataset.edges]")
    return int(data[0]), int(data[1])


def test_graph_draws_expands_and_follows_as_of(page, live_server, live_demo):
    from memories.models import Entity

    ana = Entity.objects.get(agent=live_demo, key="person:ana")
    page.goto(live_server.url + f"/ui/agents/demo/graph/?entity={ana.id}&depth=1")
    nodes, edges = _drawn(page)
    assert (nodes, edges) == (2, 1)  # Ana, spouse of Rafael
    position = page.evaluate("""() => { const n = window.anamnesisGraph.$('node[label = "Rafael"]');
        const p = n.renderedPosition(); const b = document.getElementById('cy').getBoundingClientRect();
        return {x: b.left + p.x, y: b.top + p.y}; }""")
    page.mouse.click(position["x"], position["y"])
    page.wait_for_function("+document.getElementById('cy').dataset.nodes > 2", timeout=15000)
    expanded, _ = _drawn(page)
    assert expanded >= 5  # Rafael's neighbours joined: São Paulo, Vertix, Guilherme…
    page.wait_for_selector("#panel h2:has-text('Rafael')", timeout=15000)
    shot(page, "graph-expanded")
    # the moment Rafael's first message was learned: only Ana and Rafael were known
    first = page.evaluate("JSON.parse(document.getElementById('as-of-moments').textContent)[0].t")
    page.goto(live_server.url + f"/ui/agents/demo/graph/?entity=Rafael&depth=2&as_of={first}")
    then_nodes, _ = _drawn(page)
    page.goto(live_server.url + "/ui/agents/demo/graph/?entity=Rafael&depth=2")
    now_nodes, _ = _drawn(page)
    assert then_nodes < now_nodes
    shot(page, "graph-now")


def test_chain_shows_the_move_and_a_correction_becomes_a_new_version(page, live_server, live_demo):
    from memories.models import AuditEntry, Fact

    moved = Fact.objects.current().get(agent=live_demo, text__contains="São Paulo", supersedes__isnull=False)
    page.goto(live_server.url + f"/ui/agents/demo/facts/{moved.id}/")
    versions = page.locator(".timeline > li")
    assert versions.count() == 2
    assert "Curitiba" in versions.nth(0).inner_text() and "São Paulo" in versions.nth(1).inner_text()
    shot(page, "chain")
    page.fill("#id_text", "Rafael lives in Campinas")
    page.fill("#id_reason", "he corrected himself")
    page.click("text=Save as a new version")
    page.wait_for_selector(".timeline > li:nth-child(3)")
    assert "Rafael lives in Campinas" in page.locator(".timeline > li").nth(2).inner_text()
    assert "Corrected: version" in page.inner_text(".messages")
    assert AuditEntry.objects.get(action="fact_correct").actor == "user:admin"
    shot(page, "chain-corrected")


def test_trace_page_shows_the_steps_and_time_travel_marks_changes(page, live_server, live_demo):
    from memories.models import PipelineRun

    run = PipelineRun.objects.filter(agent=live_demo, kind="write").order_by("id").last()
    page.goto(live_server.url + f"/ui/agents/demo/traces/{run.id}/")
    assert page.locator("table.waterfall tbody tr").count() >= 5
    assert page.locator("table.waterfall .bar").count() >= 5
    shot(page, "trace")
    page.goto(live_server.url + "/ui/agents/demo/time-travel/")
    page.locator("#as_of_slider").focus()
    page.keyboard.press("ArrowLeft")  # keyboard-usable: one message back submits the moment
    page.wait_for_url("**as_of=**")
    assert page.locator("tr.diff-added").count() >= 1
    # slide to the third message: Rafael still lived in Curitiba then
    page.evaluate("""() => { const s = document.getElementById('as_of_slider'); s.value = 2;
        s.dispatchEvent(new Event('change')); }""")
    page.wait_for_selector("text=Rafael lives in Curitiba")
    assert page.locator("tr.diff-changed").count() >= 1 and page.locator("tr.diff-added").count() >= 1
    shot(page, "time-travel")


def test_a_trace_says_which_link_the_semantic_back_off_guessed(page, live_server, live_demo, embedder):
    from memories.services.write import memory_write

    result = memory_write(agent=live_demo, message="I put in my first week at Brightwell Foods.",
                          speaker_name="Rafael", embedder=embedder)
    page.goto(live_server.url + f"/ui/agents/demo/traces/{result.run_id}/")
    row = page.locator("table.waterfall tbody tr", has_text="extraction")
    row.locator("summary").click()
    data = row.locator("pre")
    assert "relation_methods" in data.inner_text() and "semantic 0." in data.inner_text()
    assert "Brightwell Foods" in data.inner_text()
    shot(page, "trace-semantic")


def test_merge_suggestions_are_merged_and_dismissed_in_place(page, live_server, live_demo, embedder):
    from memories.jobs.runner import job_run
    from memories.models import AuditEntry, Entity, MergeSuggestion
    from memories.services import maintenance
    from memories.services.entities import entity_get_or_create
    from tests.ui.test_merge_suggestions import duplicates

    made = duplicates(live_demo, embedder)
    made["Thiago"] = entity_get_or_create(agent=live_demo, name="Thiago", entity_type="person",
                                          name_embedding=embedder.embed(["Thiago"])[0])
    job_run(name="merge_suggestions", agent=live_demo)
    page.goto(live_server.url + "/ui/agents/demo/")
    page.click(".sidebar >> text=Merge suggestions")
    page.wait_for_url("**/ui/agents/demo/merge-suggestions/")
    cards = page.locator("li.suggestion")
    assert cards.count() == 3
    first = cards.nth(0)
    assert "Guilherme Maturana" in first.inner_text() and "Rafael" in first.locator(".evidence").inner_text()
    assert first.locator("input[type=radio]:checked").get_attribute("value") == str(
        Entity.objects.get(agent=live_demo, key="person:guilherme_maturana").id)  # more facts: kept by default
    assert styled(page, "li.suggestion label.pick:has(input:checked)", "borderTopColor") != styled(
        page, "li.suggestion label.pick:not(:has(input:checked))", "borderTopColor")
    shot(page, "merge-suggestions")
    page.evaluate("window.notReloaded = true")

    # keep the short Guilherme this time: choose him, then Merge
    first.locator(f"input[value='{made['Guilherme'].id}']").check()
    first.get_by_role("button", name="Merge").click()
    page.wait_for_selector(".banner-success:has-text('Merged Guilherme Maturana into Guilherme')")
    assert cards.count() == 2 and page.evaluate("window.notReloaded")
    assert Entity.objects.get(agent=live_demo, key="person:guilherme_maturana").merged_into_id == made["Guilherme"].id
    shot(page, "merge-suggestions-merged")

    clara = page.locator("li.suggestion", has_text="Clara Rezende")
    clara.get_by_role("button", name="Dismiss").click()
    page.wait_for_selector(".banner-success:has-text('Dismissed: Clara Rezende and Clara')")
    assert cards.count() == 1 and page.evaluate("window.notReloaded")

    # decided elsewhere meanwhile: the click answers 409 and the list shows why, still in place
    thiago = MergeSuggestion.objects.get(agent=live_demo, status="open")
    maintenance.merge_suggestion_dismiss(agent=live_demo, suggestion_id=thiago.id, actor="user:someone-else")
    cards.nth(0).get_by_role("button", name="Merge").click()
    page.wait_for_selector(".banner-error:has-text('already dismissed')")
    assert cards.count() == 0 and page.locator("p.empty").count() == 1 and page.evaluate("window.notReloaded")
    shot(page, "merge-suggestions-conflict")
    assert dict(MergeSuggestion.objects.filter(agent=live_demo).values_list("entity_b__display_name", "status")) == {
        "Guilherme": "merged", "Clara": "dismissed", "Thiago": "dismissed"}
    assert set(AuditEntry.objects.filter(actor="user:admin").values_list("action", flat=True)) == {
        "entity_merge", "merge_suggestion_dismiss"}


def test_forget_lists_the_forms_of_her_name_then_shows_the_receipt(page, live_server, live_demo):
    """The confirmation says which forms of her name go and which stay (another Brandt is known),
    the forget lands on its receipt, and the Erasures page lists it — with nothing of her."""
    from datetime import UTC, datetime

    from memories.models import Entity, ErasureReceipt
    from memories.services.write import memory_write

    for day, text in enumerate(["Ilse Brandt moved to Hamburg.", "Klaus Brandt works at the harbour office.",
                                "I. Brandt signed the lease on Monday.", "Ilse loves sailing."], start=1):
        memory_write(agent=live_demo, message=text, speaker_name="Rafael",
                     occurred_at=datetime(2024, 8, day, tzinfo=UTC))
    ilse = Entity.objects.get(agent=live_demo, display_name="Ilse Brandt")
    page.goto(f"{live_server.url}/admin/memories/entity/{ilse.id}/forget/")
    assert "could also mean Klaus Brandt" in page.inner_text("#content")
    shot(page, "admin-forget-confirmation")
    page.goto(f"{live_server.url}/ui/agents/demo/entities/{ilse.id}/")
    page.click("text=Review what would be forgotten")
    page.wait_for_url(f"**/entities/{ilse.id}/forget/")
    forms = page.locator("table.name-forms tbody tr")
    rows = {forms.nth(i).locator("td").nth(1).inner_text(): forms.nth(i).locator("td").nth(2).inner_text()
            for i in range(forms.count())}
    assert rows["family name"].startswith("kept") and "Klaus Brandt" in rows["family name"]
    assert rows["initial and family name"].startswith("redacted") and rows["given name"].startswith("redacted")
    shot(page, "forget-confirmation")

    page.fill("#id_reason", "She asked us to")
    page.check("input[name=confirm]")
    page.click("button.danger")
    page.wait_for_url("**/ui/agents/demo/erasures/*/")
    receipt = ErasureReceipt.objects.get(agent=live_demo)
    body = page.inner_text("main")
    assert f"Erasure receipt {receipt.id}" in body and "memories_fact" in body and "user:admin" in body
    assert "Ilse" not in body and "sailing" not in body
    shot(page, "erasure-receipt")
    page.click(".sidebar >> text=Erasures")
    page.wait_for_url("**/ui/agents/demo/erasures/")
    assert page.locator("table tbody tr").count() == 1 and receipt.opaque_key in page.inner_text("main")
    shot(page, "erasures")
    page.click(".sidebar >> text=Home & search")
    page.click(f"text=erasure receipt {receipt.id}")
    page.wait_for_url(f"**/ui/agents/demo/erasures/{receipt.id}/")
    page.goto(f"{live_server.url}/admin/memories/erasurereceipt/{receipt.id}/change/")
    assert receipt.opaque_key in page.inner_text("#content") and "Ilse" not in page.inner_text("#content")
    shot(page, "admin-erasure-receipt")


def test_markup_stored_in_memory_is_shown_as_text_and_never_runs(page, live_server, live_demo):
    from memories.models import Entity
    from memories.services.write import memory_write

    payload = "<img src=x onerror=alert(1)>"
    memory_write(agent=live_demo, message=f"My cat {payload} is called Bolt.", speaker_name="Rafael")
    memory_write(agent=live_demo, message="I met <b onmouseover=alert(2)>Zed</b> at Vertix.", speaker_name="Rafael")
    rafael = Entity.objects.get(agent=live_demo, key="person:rafael")
    for path in (f"/ui/agents/demo/?q={payload}", f"/ui/agents/demo/entities/{rafael.id}/",
                 "/ui/agents/demo/ask/?q=cat+onerror", "/ui/agents/demo/traces/"):
        page.goto(live_server.url + path)
        page.mouse.move(200, 300)
    page.goto(live_server.url + f"/ui/agents/demo/?q={payload}")
    assert payload in page.inner_text("#page")
    shot(page, "markup-as-text")
    page.goto(live_server.url + f"/ui/agents/demo/graph/?entity={rafael.id}&depth=2")
    _drawn(page)
    labels = page.evaluate("window.anamnesisGraph.nodes().map(n => n.data('label'))")
    shot(page, "graph-markup")
    assert page.locator("#cy img").count() == 0 and page.locator("img[src=x]").count() == 0
    assert page.dialogs == []
    assert labels  # drawn from data: cytoscape paints labels on a canvas, never as HTML


@pytest.fixture
def asgi_server(transactional_db, embedder):
    """The project's ASGI application (HTTP and websockets) under uvicorn in a thread of this
    process, so the in-memory channel layer is shared with the test; `.loop` is its event loop."""
    import asyncio
    import socket
    import threading
    import time
    from types import SimpleNamespace

    import uvicorn

    from memory_project.asgi import application

    port = next(p for p in range(8081, 8090) if socket.socket().connect_ex(("127.0.0.1", p)) != 0)
    holder = SimpleNamespace(loop=None)

    class Server(uvicorn.Server):
        async def serve(self, sockets=None):
            holder.loop = asyncio.get_running_loop()
            await super().serve(sockets)

    server = Server(uvicorn.Config(application, host="127.0.0.1", port=port, lifespan="off", log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "uvicorn did not start"
    yield SimpleNamespace(url=f"http://127.0.0.1:{port}", loop=holder.loop)
    server.should_exit = True
    thread.join(15)


def test_a_write_through_the_service_appears_on_open_pages_without_reload(browser, asgi_server):
    import asyncio

    from asgiref.sync import sync_to_async
    from django.core.management import call_command

    from memories.models import Agent
    from memories.services.write import memory_write

    call_command("load_demo", "--only", "demo", stdout=open(os.devnull, "w"))  # noqa: SIM115
    demo = Agent.objects.get(slug="demo")
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    tab = context.new_page()
    tab.goto(asgi_server.url + "/ui/login/")
    tab.fill("#id_username", "admin")
    tab.fill("#id_password", "anamnesis-demo")
    tab.click("button[type=submit]")
    tab.wait_for_url("**/ui/")
    traces = context.new_page()
    traces.goto(asgi_server.url + "/ui/agents/demo/traces/")
    tab.goto(asgi_server.url + "/ui/agents/demo/")
    for page in (tab, traces):
        page.wait_for_selector("body[data-live-state=open]", timeout=15000)
        page.evaluate("window.notReloaded = true")
    assert "Pixel" not in tab.inner_text("#live-home")

    def write():  # the service, called on the server's loop as a request's code would be
        return memory_write(agent=demo, message="I adopted a dog called Pixel.", speaker_name="Rafael")

    result = asyncio.run_coroutine_threadsafe(sync_to_async(write)(), asgi_server.loop).result(60)
    tab.wait_for_selector("#live-home :text('Pixel')", timeout=15000)
    traces.wait_for_selector(f"#live-traces a[href$='/traces/{result.run_id}/']", timeout=15000)
    assert tab.evaluate("window.notReloaded") and traces.evaluate("window.notReloaded")
    assert tab.locator("#live-status.on").count() == 1
    shot(tab, "live-update")
    context.close()


def test_the_graph_explorer_draws_a_thousand_nodes(page, live_server):
    """1,000 entities around one hub (10 branches of 99 leaves): the page draws them all and
    stays usable (a click opens the panel). No timing is asserted: the machine is shared."""
    from datetime import UTC, datetime

    from memories.models import Entity, Relationship
    from memories.services.agents import agent_get_or_create

    agent = agent_get_or_create(slug="big", name="A big graph")
    at = datetime(2024, 1, 1, tzinfo=UTC)
    entities = Entity.objects.bulk_create(
        [Entity(agent=agent, key="person:hub", type="person", display_name="Hub", importance=1.0)]
        + [Entity(agent=agent, key=f"organization:b{i}", type="organization", display_name=f"Branch {i}",
                  importance=0.7) for i in range(10)]
        + [Entity(agent=agent, key=f"person:l{i}", type="person", display_name=f"Leaf {i}", importance=0.2)
           for i in range(989)])
    hub, branches, leaves = entities[0], entities[1:11], entities[11:]
    clocks = {"valid_from": at, "learned_at": at, "recorded_at": at}
    Relationship.objects.bulk_create(
        [Relationship(agent=agent, source=hub, target=b, rel_type="runs", **clocks) for b in branches]
        + [Relationship(agent=agent, source=leaf, target=branches[i % 10], rel_type="member_of", **clocks)
           for i, leaf in enumerate(leaves)])
    page.goto(live_server.url + f"/ui/agents/big/graph/?entity={hub.id}&depth=2")
    nodes, edges = _drawn(page)
    assert (nodes, edges) == (1000, 999)
    shot(page, "graph-1000", full_page=False)
    page.evaluate("""() => { const n = window.anamnesisGraph.$('node[label = "Branch 3"]');
        n.emit('tap'); }""")
    page.wait_for_selector("#panel h2:has-text('Branch 3')", timeout=15000)


def test_the_full_demo_gives_every_page_something_to_show(page, live_server):
    """The demo's other agents (loaded on top of `demo`, twice: nothing doubles) through the
    pages an operator opens first; screenshots for a human to look at."""
    from django.core.management import call_command

    from memories.models import AuditEntry, Entity, Event, Fact

    call_command("load_demo", stdout=open(os.devnull, "w"))  # noqa: SIM115
    counts = (Event.objects.count(), Fact.objects.count(), AuditEntry.objects.count())
    call_command("load_demo", stdout=open(os.devnull, "w"))  # noqa: SIM115
    assert (Event.objects.count(), Fact.objects.count(), AuditEntry.objects.count()) == counts
    assert Event.objects.filter(agent__slug__in=["studio", "fieldwork", "household"]).count() >= 300
    actions = set(AuditEntry.objects.values_list("action", flat=True))
    assert {"fact_correct", "fact_retract", "fact_reinstate"} <= actions

    page.goto(live_server.url + "/ui/")
    assert page.locator(".card h2").count() == 4
    shot(page, "demo-overview")
    # as Helena's assistant knew it in mid-2023: Lisbon, Atelier Norte; since: Porto, Casa Forma
    page.goto(live_server.url + "/ui/agents/studio/time-travel/?as_of=2023-07-01")
    assert page.locator("tr.diff-changed").count() >= 2 and page.locator("tr.diff-added").count() >= 3
    assert "Lisbon" in page.inner_text("tr.diff-changed >> nth=0") or "Lisbon" in page.inner_text("#page")
    shot(page, "demo-time-travel")
    moved = Fact.objects.current().get(agent__slug="studio", text__contains="moved to Porto")
    page.goto(live_server.url + f"/ui/agents/studio/facts/{moved.id}/")
    assert page.locator(".timeline > li").count() == 2 and page.locator(".clock-agent").count() == 2
    shot(page, "demo-chain-three-clocks")
    lucas = Fact.objects.current().get(agent__slug="fieldwork", text__contains="Lucas Ferreira works")
    page.goto(live_server.url + f"/ui/agents/fieldwork/facts/{lucas.id}/")
    assert page.locator(".timeline > li").count() == 3 and "Green Delta" in lucas.text
    shot(page, "demo-chain-reinstated")
    helena = Entity.objects.get(agent__slug="studio", display_name="Helena")
    page.goto(live_server.url + f"/ui/agents/studio/entities/{helena.id}/")
    assert page.locator("#aliases").count() == 1
    shot(page, "demo-entity")
    page.goto(live_server.url + f"/ui/agents/studio/graph/?entity={helena.id}&depth=2")
    nodes, _ = _drawn(page)
    assert nodes >= 8
    shot(page, "demo-graph")
    page.goto(live_server.url + f"/ui/agents/studio/graph/?entity={helena.id}&depth=2&as_of=2023-02-01")
    then, _ = _drawn(page)
    assert then < nodes
    shot(page, "demo-graph-2023")
