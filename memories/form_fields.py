"""Query-parameter fields with the bounds the storage and the pipelines can handle: the moment
range, the largest id, a strict boolean. Below both the filtersets (memories/filters.py), which
the API and the pages share, and the API's own serializer fields (memories/api/fields.py)."""

from __future__ import annotations

from datetime import UTC, datetime

from django import forms
from django_filters.fields import IsoDateTimeField

# Dates far from now break date arithmetic in the pipelines ("a year ago" of year 1); nothing a
# memory service stores is outside these.
EARLIEST = datetime(1000, 1, 1, tzinfo=UTC)
LATEST = datetime(9000, 1, 1, tzinfo=UTC)
MAX_ID = 2**63 - 1


class MomentFormField(IsoDateTimeField):
    """An ISO-8601 date-time within [EARLIEST, LATEST), in UTC."""

    def to_python(self, value):
        moment = super().to_python(value)
        if moment is None:
            return None
        if not EARLIEST <= moment < LATEST:
            raise forms.ValidationError("must be between years 1000 and 8999", code="out_of_range")
        return moment.astimezone(UTC)  # PostgreSQL rejects offsets beyond ±15:59 that ISO-8601 allows


class StrictBooleanFormField(forms.NullBooleanField):
    """A query-string boolean: true/false/1/0/yes/no, or absent; anything else is an error
    (`include_superseded=maybe` is not "no")."""

    widget = forms.TextInput
    TRUE, FALSE = {"true", "1", "yes", "on"}, {"false", "0", "no", "off"}

    def to_python(self, value):
        if value in (None, ""):
            return None
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in self.TRUE:
            return True
        if text in self.FALSE:
            return False
        raise forms.ValidationError("must be true or false", code="invalid")

    def validate(self, value):
        pass
