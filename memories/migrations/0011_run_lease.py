# Leases on running jobs (memories/services/leases.py): who runs a job and until when.

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    # the index is built CONCURRENTLY: the run table holds every retrieval's trace and stays writable
    atomic = False

    dependencies = [
        ("memories", "0010_erasure_receipt"),
    ]

    operations = [
        migrations.AddField(
            model_name="pipelinerun",
            name="lease_expires_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="pipelinerun",
            name="lease_owner",
            field=models.CharField(blank=True, default="", max_length=255),
        ),
        AddIndexConcurrently(
            model_name="pipelinerun",
            index=models.Index(condition=models.Q(("status__in", ["queued", "running"])),
                               fields=["status", "lease_expires_at"], name="run_unfinished"),
        ),
    ]
