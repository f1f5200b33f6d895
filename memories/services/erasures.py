"""The erasure receipt a forget leaves, and the vacuum that follows it.

The receipt says what a forget removed or redacted, counted per table, when and by whom, and the
opaque key the entity became — never a name, a text or an external id. After the forget's
transaction commits, the tables it touched are vacuumed: the old row versions holding her names
stop being reachable and their space is marked free. The vacuum runs in a worker, not in the
forget's request: VACUUM (INDEX_CLEANUP ON) reads every index of the tables it names, and every
agent shares those tables, so it takes as long as the whole database makes it (and two vacuums of
one table wait for each other). The receipt says "pending" until a worker records when it ran, or
why it did not (an error is logged and recorded, never raised: the forget itself has committed).
When the task cannot be sent (the broker is down), the vacuum stays pending and the sweeper
(memories.services.write_jobs: jobs_sweep) sends it again.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from memories.jobs.locks import advisory_lock
from memories.models import Agent, ErasureReceipt
from memories.services.broker import task_send

logger = logging.getLogger(__name__)

# The worker's task (memories.tasks) is named here, not imported: tasks call services.
ERASURE_VACUUM_TASK = "memories.tasks.erasure_vacuum_task"
# a vacuum still pending this long after its forget was never sent (broker down) or was lost
VACUUM_SWEEP_AFTER = timedelta(minutes=2)
_VACUUM_LOCK = "erasure_vacuum"


def erasure_receipt_record(*, agent: Agent, actor: str, opaque_key: str, opaque_keys: list[str],
                           reason_given: bool, totals: dict[str, int], tables: dict[str, dict[str, int]],
                           name_forms: dict[str, str]) -> ErasureReceipt:
    """Store the receipt of a forget (in the forget's transaction) and send its vacuum to a worker
    once that transaction commits. Every argument is a count, a table or an opaque key."""
    receipt = ErasureReceipt.objects.create(
        agent=agent, created_at=timezone.now(), actor=actor[:200], opaque_key=opaque_key,
        opaque_keys=sorted(opaque_keys), reason_given=reason_given, totals=totals,
        tables={table: dict(sorted(counts.items())) for table, counts in sorted(tables.items())},
        name_forms=name_forms, vacuum_tables=sorted(tables))
    receipt_id = receipt.id
    transaction.on_commit(lambda: erasure_vacuum_enqueue(receipt_id=receipt_id))
    return receipt


def erasure_vacuum_enqueue(*, receipt_id: int, force: bool = False) -> bool:
    """Send the receipt's vacuum to a worker; False when it stays pending (the broker is down:
    logged, never raised; the sweeper sends it later). With ANAMNESIS_ERASURE_VACUUM_INLINE (the
    tests' setting) it runs here and now instead."""
    if settings.ANAMNESIS_ERASURE_VACUUM_INLINE:
        return erasure_vacuum(receipt_id=receipt_id)
    return task_send(ERASURE_VACUUM_TASK, args=[receipt_id], force=force,
                     what=f"erasure receipt {receipt_id}: its vacuum stays pending")


def erasure_vacuums_pending(*, older_than: timedelta = VACUUM_SWEEP_AFTER) -> list[int]:
    """The receipts whose vacuum has neither run nor failed `older_than` after their forget."""
    return list(ErasureReceipt.objects.filter(
        vacuumed_at__isnull=True, vacuum_error="", created_at__lt=timezone.now() - older_than,
    ).order_by("id").values_list("id", flat=True)[:100])


def erasure_vacuum(*, receipt_id: int) -> bool:
    """VACUUM the tables the receipt names (with index cleanup, so index entries pointing at the
    old versions go too) and record it on the receipt. Once is enough: a receipt already vacuumed,
    or being vacuumed by another process (a second send of the task), is left alone. False
    (logged, recorded) when it could not run: inside a transaction, or a database error."""
    receipt = ErasureReceipt.objects.filter(pk=receipt_id).first()
    if receipt is None or receipt.vacuumed_at is not None:
        return receipt is not None
    if connection.in_atomic_block:
        return _vacuum_failed(receipt, "not vacuumed: still inside a transaction (VACUUM needs autocommit)")
    with advisory_lock(_VACUUM_LOCK, receipt_id) as mine:
        if mine and not ErasureReceipt.objects.filter(pk=receipt_id, vacuumed_at__isnull=False).exists():
            return _vacuum_run(receipt)
    logger.info("erasure receipt %s: vacuumed by another process", receipt_id)
    return True


def _vacuum_run(receipt: ErasureReceipt) -> bool:
    started = time.perf_counter()
    try:
        with connection.cursor() as cursor:
            for table in receipt.vacuum_tables:
                cursor.execute(f"VACUUM (INDEX_CLEANUP ON) {connection.ops.quote_name(table)}")
    except DatabaseError as exc:
        return _vacuum_failed(receipt, f"vacuum failed: {type(exc).__name__}: {str(exc).strip()[:300]}")
    ErasureReceipt.objects.filter(pk=receipt.pk).update(
        vacuumed_at=timezone.now(), vacuum_seconds=round(time.perf_counter() - started, 3), vacuum_error="")
    return True


def _vacuum_failed(receipt: ErasureReceipt, message: str) -> bool:
    logger.warning("erasure receipt %s: %s", receipt.pk, message)
    try:
        ErasureReceipt.objects.filter(pk=receipt.pk).update(vacuum_error=message)
    except DatabaseError:
        logger.exception("erasure receipt %s: could not record the vacuum error", receipt.pk)
    return False
