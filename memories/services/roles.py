"""The two roles as Django groups: `viewers` read every page, `operators` may also change
memory (correct, retract, reinstate, alias, merge, unmerge, forget) through the operator services.
Superusers may do everything. Created after every `migrate` (post_migrate), so a fresh database has
them. The UI and the REST API (a session's rights) both ask `user_can_view` / `user_can_operate`;
`is_staff` alone grants nothing (it only opens the admin site, where model permissions apply)."""

from __future__ import annotations

from django.contrib.auth.models import Group, Permission
from django.db import transaction

VIEWERS, OPERATORS = "viewers", "operators"
MODELS = ("agent", "event", "entity", "entityalias", "fact", "relationship", "pipelinerun", "pipelinestep",
          "auditentry")
VIEW_PERM = "memories.view_fact"
OPERATE_PERMS = ("memories.change_fact", "memories.change_entity")


def user_can_view(user) -> bool:
    """Reads every agent's pages (and, over a session, the API's reads): the viewers' permission,
    which operators and superusers have too."""
    return bool(user is not None and user.is_authenticated and user.has_perm(VIEW_PERM))


def user_can_operate(user) -> bool:
    """Also changes memory through the operator services: the operators' permissions."""
    return bool(user is not None and user.is_authenticated and all(user.has_perm(p) for p in OPERATE_PERMS))


def user_is_superuser(user) -> bool:
    return bool(user is not None and user.is_authenticated and user.is_active and user.is_superuser)


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
