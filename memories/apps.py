from django.apps import AppConfig
from django.db.models.signals import post_migrate


class MemoriesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "memories"
    verbose_name = "Memories"

    def ready(self):
        from memories.services.roles import roles_ensure_after_migrate

        # after auth's own post_migrate handler has created this app's permissions
        post_migrate.connect(roles_ensure_after_migrate, sender=self, dispatch_uid="memories_roles")
