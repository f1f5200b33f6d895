from .agents import Agent
from .api_keys import ApiKey, ApiKeyScope
from .audit import AuditEntry
from .base import EMBEDDING_DIMENSIONS
from .entities import Entity, EntityAlias
from .events import Event
from .facts import Fact, FactEntityLink, ImportanceCategory, SourceContext
from .keyword import KeywordCorpus, KeywordPosting, KeywordTerm
from .relationships import Relationship
from .traces import PipelineRun, PipelineStep, RunKind, RunStatus

__all__ = [
    "EMBEDDING_DIMENSIONS",
    "Agent",
    "ApiKey",
    "ApiKeyScope",
    "AuditEntry",
    "Entity",
    "EntityAlias",
    "Event",
    "Fact",
    "FactEntityLink",
    "ImportanceCategory",
    "KeywordCorpus",
    "KeywordPosting",
    "KeywordTerm",
    "PipelineRun",
    "PipelineStep",
    "Relationship",
    "RunKind",
    "RunStatus",
    "SourceContext",
]
