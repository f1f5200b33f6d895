from django.db import models


class Agent(models.Model):
    """A tenant: one AI agent (or app) whose memories are kept apart from every other's.
    Every other memory row points at exactly one agent, and every query is scoped by it. Its LLM
    token budgets per UTC day and month (memories/budgets.py), when set, replace the server's
    defaults; unset (None) they are the defaults'."""

    slug = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    # Bumped by every write that changes relationships or fact links; graph caches key on it.
    graph_version = models.PositiveBigIntegerField(default=0)
    # Changed only by memories.services.budgets.agent_llm_budget_set (audited; an import creates the agent
    # with the ones it had); 0 keeps the agent off the LLM.
    llm_budget_day_tokens = models.PositiveBigIntegerField(null=True, blank=True)
    llm_budget_month_tokens = models.PositiveBigIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug
