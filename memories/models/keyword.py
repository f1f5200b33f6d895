from django.db import models


class KeywordCorpus(models.Model):
    """BM25 corpus statistics of one agent's documents of one kind (`fact` or `event`): how many
    documents and their total length in lexemes. Counts every stored row (closed versions too),
    so current and as-of queries share one set of statistics."""

    agent = models.ForeignKey("memories.Agent", on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=8)
    doc_count = models.BigIntegerField(default=0)
    total_length = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["agent", "kind"], name="keyword_corpus_unique")]

    def __str__(self) -> str:
        return f"{self.agent_id}/{self.kind}: {self.doc_count} docs"


class KeywordTerm(models.Model):
    """Document frequency of one lexeme (Postgres `english` stemming) among one agent's
    documents of one kind — the `df` of BM25's IDF."""

    agent = models.ForeignKey("memories.Agent", on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=8)
    term = models.CharField(max_length=255)
    df = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["agent", "kind", "term"], name="keyword_term_unique")]

    def __str__(self) -> str:
        return f"{self.term}: {self.df}"
