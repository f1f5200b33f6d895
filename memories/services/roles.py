"""The UI's two roles as Django groups: `viewers` read every page, `operators` may also change
memory (correct, retract, alias, merge, forget) through the operator services. Superusers may do
everything. Created after every `migrate` (post_migrate), so a fresh database has them."""

from __future__ import annotations

from django.contrib.auth.models import Group, Permission
from django.db import transaction

VIEWERS, OPERATORS = "viewers", "operators"
MODELS = ("agent", "event", "entity", "entityalias", "fact", "relationship", "pipelinerun", "pipelinestep",
          "auditentry")
VIEW_PERM = "memories.view_fact"
OPERATE_PERMS = ("memories.change_fact", "memories.change_entity")


@transaction.atomic
def roles_ensure() -> None:
    """Create (or complete) both groups with their permissions; idempotent."""
    view = list(Permission.objects.filter(content_type__app_label="memories",
                                          codename__in=[f"view_{m}" for m in MODELS]))
    change = list(Permission.objects.filter(content_type__app_label="memories",
                                            codename__in=["change_fact", "change_entity", "change_entityalias"]))
    viewers, _ = Group.objects.get_or_create(name=VIEWERS)
    viewers.permissions.add(*view)
    operators, _ = Group.objects.get_or_create(name=OPERATORS)
    operators.permissions.add(*view, *change)


def roles_ensure_after_migrate(sender, **kwargs) -> None:
    roles_ensure()
