"""The agent's clock on facts and relationships: learned_at / valid_to_learned_at / unlearned_at,
filled for existing rows from their source events (see memories/models/base.py: BiTemporal)."""

from django.db import migrations, models

FILL_FACTS = """
UPDATE memories_fact f SET learned_at = CASE WHEN f.source_context = 'operator' THEN f.recorded_at
    ELSE COALESCE((SELECT e.occurred_at FROM memories_event e WHERE e.id = f.source_event_id), f.recorded_at) END;

-- superseded: the end became known when the successor was learned
UPDATE memories_fact f SET valid_to_learned_at = GREATEST(s.learned_at, f.learned_at)
FROM memories_fact s WHERE s.supersedes_id = f.id AND f.valid_to IS NOT NULL;

-- retracted by an operator: no longer believed at all
UPDATE memories_fact f SET unlearned_at = GREATEST(f.invalidated_at, f.learned_at)
WHERE f.invalidated_at IS NOT NULL AND f.invalidation_reason LIKE 'retracted by %'
  AND NOT EXISTS (SELECT 1 FROM memories_fact s WHERE s.supersedes_id = f.id);

-- any other end (a message said it stopped, or the text gave it): known when it was said
UPDATE memories_fact f SET valid_to_learned_at = GREATEST(f.valid_to, f.learned_at)
WHERE f.valid_to IS NOT NULL AND f.valid_to_learned_at IS NULL;
"""

FILL_RELATIONSHIPS = """
UPDATE memories_relationship r SET learned_at = COALESCE(
    (SELECT e.occurred_at FROM memories_event e WHERE e.id = r.source_event_id), r.recorded_at);

UPDATE memories_relationship r SET unlearned_at = GREATEST(f.unlearned_at, r.learned_at)
FROM memories_fact f WHERE f.id = r.evidence_fact_id AND f.unlearned_at IS NOT NULL AND r.valid_to IS NOT NULL;

UPDATE memories_relationship r SET valid_to_learned_at = GREATEST(
    COALESCE((SELECT f.valid_to_learned_at FROM memories_fact f WHERE f.id = r.evidence_fact_id), r.valid_to),
    r.learned_at)
WHERE r.valid_to IS NOT NULL AND r.unlearned_at IS NULL;
"""


class Migration(migrations.Migration):

    dependencies = [
        ("memories", "0004_keywordterm_version"),
    ]

    operations = [
        migrations.AddField(model_name="fact", name="learned_at", field=models.DateTimeField(null=True)),
        migrations.AddField(model_name="fact", name="valid_to_learned_at",
                            field=models.DateTimeField(blank=True, null=True)),
        migrations.AddField(model_name="fact", name="unlearned_at", field=models.DateTimeField(blank=True, null=True)),
        migrations.AddField(model_name="relationship", name="learned_at", field=models.DateTimeField(null=True)),
        migrations.AddField(model_name="relationship", name="valid_to_learned_at",
                            field=models.DateTimeField(blank=True, null=True)),
        migrations.AddField(model_name="relationship", name="unlearned_at",
                            field=models.DateTimeField(blank=True, null=True)),
        migrations.RunSQL(FILL_FACTS, migrations.RunSQL.noop),
        migrations.RunSQL(FILL_RELATIONSHIPS, migrations.RunSQL.noop),
        # the updates left deferred foreign-key checks pending; Postgres alters no table with those
        migrations.RunSQL("SET CONSTRAINTS ALL IMMEDIATE", migrations.RunSQL.noop),
        migrations.AlterField(model_name="fact", name="learned_at", field=models.DateTimeField()),
        migrations.AlterField(model_name="relationship", name="learned_at", field=models.DateTimeField()),
        migrations.AddConstraint(
            model_name="fact",
            constraint=models.CheckConstraint(
                condition=models.Q(("unlearned_at__isnull", True), ("unlearned_at__gte", models.F("learned_at")),
                                   _connector="OR"),
                name="fact_learned_window", violation_error_message="unlearned_at must not be before learned_at"),
        ),
        migrations.AddConstraint(
            model_name="relationship",
            constraint=models.CheckConstraint(
                condition=models.Q(("unlearned_at__isnull", True), ("unlearned_at__gte", models.F("learned_at")),
                                   _connector="OR"),
                name="relationship_learned_window",
                violation_error_message="unlearned_at must not be before learned_at"),
        ),
    ]
