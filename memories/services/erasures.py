"""The erasure receipt a forget leaves, and the vacuum that follows it.

The receipt says what a forget removed or redacted, counted per table, when and by whom, and the
opaque key the entity became — never a name, a text or an external id. After the forget's
transaction commits, the tables it touched are vacuumed (VACUUM cannot run inside a transaction,
so it runs on commit, on an autocommit connection): the old row versions holding her names stop
being reachable and their space is marked free. The receipt records when that happened, or why
it did not (an error is logged and recorded, never raised: the forget itself has committed).
"""

from __future__ import annotations

import logging
import time

from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from memories.models import Agent, ErasureReceipt

logger = logging.getLogger(__name__)


def erasure_receipt_record(*, agent: Agent, actor: str, opaque_key: str, opaque_keys: list[str],
                           reason_given: bool, totals: dict[str, int], tables: dict[str, dict[str, int]],
                           name_forms: dict[str, str]) -> ErasureReceipt:
    """Store the receipt of a forget (in the forget's transaction) and vacuum the tables it names
    once that transaction commits. Every argument is a count, a table or an opaque key."""
    receipt = ErasureReceipt.objects.create(
        agent=agent, created_at=timezone.now(), actor=actor[:200], opaque_key=opaque_key,
        opaque_keys=sorted(opaque_keys), reason_given=reason_given, totals=totals,
        tables={table: dict(sorted(counts.items())) for table, counts in sorted(tables.items())},
        name_forms=name_forms, vacuum_tables=sorted(tables))
    receipt_id = receipt.id
    transaction.on_commit(lambda: erasure_vacuum(receipt_id=receipt_id))
    return receipt


def erasure_vacuum(*, receipt_id: int) -> bool:
    """VACUUM the tables the receipt names (with index cleanup, so index entries pointing at the
    old versions go too) and record it on the receipt. False (logged, recorded) when it could not
    run: inside a transaction, or a database error."""
    receipt = ErasureReceipt.objects.filter(pk=receipt_id).first()
    if receipt is None:
        return False
    if connection.in_atomic_block:
        return _vacuum_failed(receipt, "not vacuumed: still inside a transaction (VACUUM needs autocommit)")
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
