"""The data model on the real embedded PostgreSQL + pgvector."""

import threading
from datetime import timedelta

import numpy as np
import pytest
from django.core.management import call_command
from django.db import IntegrityError, connection, connections, transaction
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from memories.models import Entity, EntityAlias, Event, Fact, Relationship
from memories.services.entities import alias_register, entity_get_or_create


def _indexes(table):
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s", [table])
        return dict(cursor.fetchall())


@pytest.mark.django_db
def test_vector_extension_and_search_indexes_exist():
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        assert cursor.fetchone() is not None
    facts = _indexes("memories_fact")
    assert "USING hnsw (embedding vector_cosine_ops)" in facts["fact_embedding_hnsw"]
    assert "USING gin (search_vector)" in facts["fact_search_gin"]
    assert "agent_id, valid_to, invalidated_at" in facts["fact_agent_validity"]
    assert "USING hnsw (embedding vector_cosine_ops)" in _indexes("memories_event")["event_embedding_hnsw"]


@pytest.mark.django_db(transaction=True)
def test_migrations_run_from_scratch_and_back():
    call_command("migrate", "memories", "zero", verbosity=0)
    assert "memories_fact" not in connection.introspection.table_names()
    call_command("migrate", verbosity=0)
    executor = MigrationExecutor(connection)
    assert executor.migration_plan(executor.loader.graph.leaf_nodes()) == []
    assert "memories_fact" in connection.introspection.table_names()


def _entity(agent, name="Ana"):
    return entity_get_or_create(agent=agent, name=name, entity_type="person")


def test_fact_with_valid_to_before_valid_from_is_rejected(agent):
    now = timezone.now()
    with pytest.raises(IntegrityError), transaction.atomic():
        Fact.objects.create(agent=agent, entity=_entity(agent), text="Ana lives in Rio", valid_from=now,
                            valid_to=now - timedelta(days=1), recorded_at=now, learned_at=now)


def test_fact_invalidated_before_recorded_is_rejected(agent):
    now = timezone.now()
    with pytest.raises(IntegrityError), transaction.atomic():
        Fact.objects.create(agent=agent, entity=_entity(agent), text="Ana lives in Rio", valid_from=now,
                            recorded_at=now, learned_at=now, invalidated_at=now - timedelta(seconds=1))


def test_relationship_windows_and_self_reference_are_rejected(agent):
    now = timezone.now()
    ana, rio = _entity(agent), entity_get_or_create(agent=agent, name="Rio", entity_type="place")
    with pytest.raises(IntegrityError), transaction.atomic():
        Relationship.objects.create(agent=agent, source=ana, target=rio, rel_type="lives_in", valid_from=now,
                                    valid_to=now - timedelta(hours=1), recorded_at=now, learned_at=now)
    with pytest.raises(IntegrityError), transaction.atomic():
        Relationship.objects.create(agent=agent, source=ana, target=ana, rel_type="knows", valid_from=now,
                                    recorded_at=now, learned_at=now)
    Relationship.objects.create(agent=agent, source=ana, target=rio, rel_type="lives_in", valid_from=now,
                                recorded_at=now, learned_at=now)
    assert Relationship.objects.count() == 1


def test_event_idempotency_key_is_unique_per_agent(agent, other_agent):
    now = timezone.now()
    Event.objects.create(agent=agent, speaker="Rafael", text="hi", occurred_at=now, recorded_at=now,
                         idempotency_key="k1")
    Event.objects.create(agent=other_agent, speaker="Rafael", text="hi", occurred_at=now, recorded_at=now,
                         idempotency_key="k1")
    with pytest.raises(IntegrityError), transaction.atomic():
        Event.objects.create(agent=agent, speaker="Rafael", text="again", occurred_at=now, recorded_at=now,
                             idempotency_key="k1")


@pytest.mark.django_db(transaction=True)
def test_alias_has_one_winner_under_eight_concurrent_writers(agent):
    entities = [entity_get_or_create(agent=agent, name=f"Person {i}", entity_type="person") for i in range(8)]
    barrier = threading.Barrier(8)
    errors, results = [], []

    def register(entity):
        try:
            barrier.wait()
            with transaction.atomic():
                results.append(alias_register(agent=agent, entity=entity, names=["Guili"]))
        except Exception as exc:  # any error surfaced to a writer fails the test
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=register, args=(e,)) for e in entities]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(results) == [0] * 7 + [1]
    assert EntityAlias.objects.filter(agent=agent, alias="guili").count() == 1


@pytest.mark.django_db(transaction=True)
def test_entity_creation_has_one_winner_under_concurrency(agent):
    barrier = threading.Barrier(8)
    ids, errors = [], []

    def create():
        try:
            barrier.wait()
            with transaction.atomic():
                ids.append(entity_get_or_create(agent=agent, name="Joana Prado", entity_type="person").id)
        except Exception as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=create) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(set(ids)) == 1
    assert Entity.objects.filter(agent=agent, key="person:joana_prado").count() == 1


def test_local_embedder_gives_normalized_384d_vectors_with_sensible_similarity(embedder):
    a, b, c = embedder.embed(["Ricardo lives in São Paulo", "Ricardo's home is in Sao Paulo, Brazil",
                              "The quarterly tax filing deadline"])
    for v in (a, b, c):
        assert v.shape == (384,)
        assert np.linalg.norm(v) == pytest.approx(1.0, abs=1e-4)
    assert float(a @ b) > float(a @ c) + 0.3


def test_onnx_and_torch_backends_give_the_same_vectors():
    """Stored vectors stay comparable whichever local backend wrote them; batching by length
    keeps each text's own vector in its own place."""
    from memories.providers.embeddings import LocalMiniLMEmbedder, OnnxMiniLMEmbedder

    texts = ["I moved to Austin last spring with my wife Ana.", "ok",
             "Guili said the quarterly report is due on Friday, and he is worried about it."]
    onnx_vectors = OnnxMiniLMEmbedder(batch_size=2).embed(texts)
    torch_vectors = LocalMiniLMEmbedder().embed(texts)
    for o, t in zip(onnx_vectors, torch_vectors, strict=True):
        assert float(o @ t) > 0.9999


def test_a_text_gets_the_same_vector_whichever_texts_share_its_batch():
    """An import embeds its texts four at a time, a single write one at a time: the vector a
    text is stored with does not depend on which texts were embedded beside it."""
    from memories.providers.embeddings import OnnxMiniLMEmbedder

    texts = ["ok", "Marta's bakery on the corner opened a second shop by the station last week.",
             "We adopted a grey cat.", "Tobias is starting at the hospital in Leeds on Monday as a porter.",
             "Lunch?", "My sister and her husband finally sold the flat they bought in 2019."]
    alone = [OnnxMiniLMEmbedder(batch_size=1).embed([t])[0] for t in texts]
    for size in (2, 4, 16):
        together = OnnxMiniLMEmbedder(batch_size=size).embed(texts)
        for a, b in zip(alone, together, strict=True):
            assert np.abs(a - b).max() < 1e-6
