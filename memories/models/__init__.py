from .agents import Agent
from .api_keys import ApiKey, ApiKeyScope
from .audit import AuditEntry
from .base import EMBEDDING_DIMENSIONS
from .entities import Entity, EntityAlias, EntityMerge
from .events import Event
from .facts import Fact, FactAccess, FactEntityLink, ImportanceCategory, SourceContext
from .forget import ErasureReceipt, ForgetTombstone
from .jobs import JobCheckpoint, MergeSuggestion, MergeSuggestionStatus
from .keyword import KeywordCorpus, KeywordPosting, KeywordTerm
from .relationships import Relationship
from .traces import PipelineRun, PipelineStep, RunKind, RunStatus

# The tables of the two document kinds that are searched (semantic, BM25) by agent.
DOCUMENT_TABLES = {"fact": Fact._meta.db_table, "event": Event._meta.db_table}

__all__ = [
    "DOCUMENT_TABLES",
    "EMBEDDING_DIMENSIONS",
    "Agent",
    "ApiKey",
    "ApiKeyScope",
    "AuditEntry",
    "Entity",
    "EntityAlias",
    "EntityMerge",
    "ErasureReceipt",
    "Event",
    "Fact",
    "FactAccess",
    "FactEntityLink",
    "ForgetTombstone",
    "ImportanceCategory",
    "JobCheckpoint",
    "KeywordCorpus",
    "KeywordPosting",
    "KeywordTerm",
    "MergeSuggestion",
    "MergeSuggestionStatus",
    "PipelineRun",
    "PipelineStep",
    "Relationship",
    "RunKind",
    "RunStatus",
    "SourceContext",
]
