"""Erasure receipts: what each forget removed or redacted, counted per table, when and by whom,
with no personal data of the forgotten person. Operators only, like the forget itself (the API
asks for the admin scope): a receipt names the operator who acted."""

from __future__ import annotations

from django.views.decorators.http import require_GET

from dashboard.pages import or_404, render_page, ui_page
from memories import selectors


@require_GET
@ui_page(operate=True)
def erasures(request, agent):
    return render_page(request, "dashboard/erasures.html", {
        "nav": "erasures", "receipts": list(selectors.erasure_receipts(agent=agent)[:200]),
    }, agent=agent)


@require_GET
@ui_page(operate=True)
def erasure_detail(request, agent, receipt_id: int):
    receipt = or_404(selectors.erasure_receipt_get, agent=agent, receipt_id=receipt_id)
    rows = [(table, what.replace("_", " "), n)
            for table, counts in receipt.tables.items() for what, n in counts.items()]
    return render_page(request, "dashboard/erasure.html", {
        "nav": "erasures", "receipt": receipt, "rows": rows,
    }, agent=agent)
