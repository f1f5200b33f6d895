from django.db import models


class KeywordCorpus(models.Model):
    """BM25 corpus statistics of one agent's documents of one kind (`fact` or `event`): how many
    documents and their total length in lexemes. Counts every stored row (closed versions too),
    so current and as-of queries share one set of statistics."""

    agent = models.ForeignKey("memories.Agent", on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=8)
    doc_count = models.BigIntegerField(default=0)
    total_length = models.BigIntegerField(default=0)
    # stamped from memories_keyword_version by every statement that adds or removes documents of
    # the kind, in that statement's transaction (`removed_version` only by removals: a forget's
    # redaction takes a message out, re-embeds it and adds it again). What the process's copies
    # of the agent's vectors are checked by, and whether new rows alone can bring one up to date
    # (retrieval.vector_cache).
    version = models.BigIntegerField(default=0, db_default=0)
    removed_version = models.BigIntegerField(default=0, db_default=0)

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
    # Drawn from a sequence by every statement that changes this term's postings: a reader's
    # cached posting list of the term is current exactly while this value is unchanged.
    version = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["agent", "kind", "term"], name="keyword_term_unique")]

    def __str__(self) -> str:
        return f"{self.term}: {self.df}"


class KeywordPosting(models.Model):
    """One lexeme of one document, with its term frequency and the document's length: the
    inverted index BM25 is scored from, so a query reads narrow index rows for its own terms
    instead of unnesting the tsvector of every matching document. `doc_id` is a Fact or an
    Event id, by `kind`; rows follow the documents through `keyword_stats_apply`."""

    agent = models.ForeignKey("memories.Agent", on_delete=models.CASCADE, related_name="+", db_index=False)
    kind = models.CharField(max_length=8)
    term = models.CharField(max_length=255)
    doc_id = models.BigIntegerField()
    tf = models.IntegerField()
    doc_length = models.IntegerField()

    class Meta:
        # One index: scoring reads it index-only, and removal finds a document's rows through
        # its own lexemes (a second index on doc_id cost every write more than it saved).
        indexes = [
            models.Index(fields=["agent", "kind", "term"], include=["doc_id", "tf", "doc_length"],
                         name="keyword_posting_term"),
        ]

    def __str__(self) -> str:
        return f"{self.kind}:{self.doc_id} {self.term}×{self.tf}"
