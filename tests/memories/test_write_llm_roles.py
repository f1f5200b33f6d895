"""The LLM path keeps the structural guarantees of roles, cessations and corrections: the scripted
OpenAI-compatible server answers, the same reconciliation stores."""

from datetime import UTC, datetime, timedelta

from memories.models import Fact, Relationship
from memories.services.write import memory_write
from tests.support.scripts import by_message, by_schema, extraction

T0 = datetime(2022, 5, 2, 9, 0, tzinfo=UTC)
W = "Wren Adler"


def _edges(agent):
    return {(r.source.display_name, r.rel_type, r.target.display_name)
            for r in Relationship.objects.current().filter(agent=agent)}


def test_llm_roles_cessations_and_corrections(agent, fake_llm):
    ended = extraction(entities=[(W, "person")], facts=[(W, "Wren Adler switched from oat milk to soy milk",
                                                        "routine_activity")])
    ended["facts"][0]["ends"] = ["oat milk"]
    corrected = extraction(entities=[("Riverside", "place"), ("Ridgeway", "place")])
    corrected["corrections"] = [{"wrong": "Ridgeway", "right": "Riverside"}]
    fake_llm.responder = by_schema({"informed_extraction": by_message({
        "boss is Irene": extraction(entities=[(W, "person"), ("Irene Vos", "person")],
                                    facts=[(W, "Irene Vos is Wren Adler's boss", "biographical_milestone")],
                                    relations=[("Irene Vos", "manager_of", W)]),
        "report to Omar": extraction(entities=[(W, "person"), ("Omar Haddad", "person")],
                                     facts=[(W, "Wren Adler reports to Omar Haddad", "relationship_change")],
                                     relations=[(W, "reports_to", "Omar Haddad")]),
        "oat milk every": extraction(entities=[(W, "person")],
                                     facts=[(W, "Wren Adler drinks oat milk every morning", "routine_activity")]),
        "switched from oat": ended,
        "moved to Ridgeway": extraction(entities=[(W, "person"), ("Ridgeway", "place")],
                                        facts=[(W, "Wren Adler moved to Ridgeway", "biographical_milestone")],
                                        relations=[(W, "lives_in", "Ridgeway")]),
        "I meant Riverside": corrected,
    })})
    at = T0
    for text in ["My boss is Irene Vos.", "Now I report to Omar Haddad.", "I drink oat milk every morning.",
                 "I switched from oat milk to soy milk.", "I moved to Ridgeway.",
                 "Sorry, I meant Riverside, not Ridgeway."]:
        assert memory_write(agent=agent, message=text, speaker_name=W, occurred_at=at).success
        at += timedelta(hours=2)
    edges = _edges(agent)
    assert (W, "reports_to", "Omar Haddad") in edges and ("Irene Vos", "manager_of", W) not in edges
    assert (W, "lives_in", "Riverside") in edges and (W, "lives_in", "Ridgeway") not in edges
    current = list(Fact.objects.current().filter(agent=agent).values_list("text", flat=True))
    assert not any("Irene" in t and "boss" in t for t in current)
    assert not any("every morning" in t for t in current)
    assert any("Riverside" in t for t in current) and not any("Ridgeway" in t for t in current)
