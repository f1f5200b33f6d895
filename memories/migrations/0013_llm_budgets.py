# LLM token budgets per agent (memories/budgets.py): an agent's own day and month budgets, and the
# partial indexes that sum what its runs spent.

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models

SPENT_TOKENS = models.Q(("tokens_in__gt", 0), ("tokens_out__gt", 0), _connector="OR")


class Migration(migrations.Migration):
    # the indexes are built CONCURRENTLY: the run and step tables hold every trace and stay writable
    atomic = False

    dependencies = [
        ("memories", "0012_tombstone_part_digests"),
    ]

    operations = [
        migrations.AddField(
            model_name="agent",
            name="llm_budget_day_tokens",
            field=models.PositiveBigIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="agent",
            name="llm_budget_month_tokens",
            field=models.PositiveBigIntegerField(blank=True, null=True),
        ),
        AddIndexConcurrently(
            model_name="pipelinerun",
            index=models.Index(condition=SPENT_TOKENS, fields=["agent", "finished_at"],
                               include=("tokens_in", "tokens_out"), name="run_llm_tokens"),
        ),
        AddIndexConcurrently(
            model_name="pipelinestep",
            index=models.Index(condition=SPENT_TOKENS, fields=["run", "name"],
                               include=("tokens_in", "tokens_out"), name="step_llm_tokens"),
        ),
    ]
