"""agents/{agent}/erasures/: the receipts forgets left — what each removed or redacted, counted
per table, when, by whom, and the opaque key the entity became. They hold no personal data of
the forgotten person, but they do name the operator or key that acted, and that a forget happened:
reading them needs the admin scope, the one that may forget."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.reverse import reverse

from memories import selectors
from memories.api.views_base import AgentScopedReadViewSet
from memories.models import ApiKeyScope, ErasureReceipt


class ErasureReceiptSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    tables = serializers.DictField(
        child=serializers.DictField(child=serializers.IntegerField()),
        help_text="rows changed per table: deleted, redacted, mentions_redacted, request_keys_redacted, …")
    totals = serializers.DictField(child=serializers.IntegerField(),
                                   help_text="entities, facts, relationships, aliases, links deleted; messages "
                                             "redacted; profiles scrubbed; request keys replaced by digests")
    name_forms = serializers.DictField(child=serializers.CharField(), help_text=(
        "per kind of shorter name form (family name, title and family name, initial and family name, given "
        "name): redacted with her, kept (another known person could be meant, or an ordinary word) or partly"))
    vacuum = serializers.SerializerMethodField()

    class Meta:
        model = ErasureReceipt
        fields = ["id", "url", "created_at", "actor", "opaque_key", "opaque_keys", "reason_given", "totals",
                  "tables", "name_forms", "vacuum"]

    @extend_schema_field(serializers.URLField())
    def get_url(self, receipt) -> str:
        return reverse("api:erasure-detail", kwargs={"agent": self.context["view"].agent.slug, "pk": receipt.pk},
                       request=self.context.get("request"))

    @extend_schema_field({"type": "object", "properties": {
        "status": {"type": "string", "enum": ["pending", "done", "failed"],
                   "description": "pending until a worker has vacuumed the tables after the forget"},
        "tables": {"type": "array", "items": {"type": "string"}},
        "vacuumed_at": {"type": "string", "format": "date-time", "nullable": True},
        "seconds": {"type": "number", "nullable": True}, "error": {"type": "string"}}})
    def get_vacuum(self, receipt) -> dict:
        return {"status": receipt.vacuum_status, "tables": receipt.vacuum_tables, "seconds": receipt.vacuum_seconds,
                "error": receipt.vacuum_error,
                "vacuumed_at": receipt.vacuumed_at and serializers.DateTimeField().to_representation(
                    receipt.vacuumed_at)}


class ErasureReceiptViewSet(AgentScopedReadViewSet):
    """Erasure receipts, newest first (admin scope)."""

    queryset = ErasureReceipt.objects.none()
    serializer_class = ErasureReceiptSerializer
    scopes = {"list": ApiKeyScope.ADMIN, "retrieve": ApiKeyScope.ADMIN}

    def scoped_queryset(self, agent):
        return selectors.erasure_receipts(agent=agent)
