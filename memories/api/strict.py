"""Strict input: a request that names a field the operation does not have, or sends a value of
the wrong JSON type (`{"text": 5}`, `{"alias": 12}`, `"dry_run": "yes"`), is a 400 naming the
field, never silently coerced or ignored (a misspelled `occured_at` would otherwise take "now")."""

from __future__ import annotations

from collections.abc import Mapping

from rest_framework import serializers

_STRING_FIELDS = (serializers.CharField, serializers.DateTimeField, serializers.ChoiceField)
_NUMBER_FIELDS = (serializers.IntegerField, serializers.FloatField, serializers.DecimalField)


def _type_problem(field: serializers.Field, value) -> str | None:
    if value is None:
        return None  # required / allow_null are the field's own checks
    if isinstance(field, _STRING_FIELDS) and not isinstance(value, str):
        return "must be a string"
    if isinstance(field, _NUMBER_FIELDS) and (isinstance(value, bool) or not isinstance(value, int | float)):
        return "must be a number"
    if isinstance(field, serializers.BooleanField) and not isinstance(value, bool):
        return "must be true or false"
    if isinstance(field, serializers.ListField) and isinstance(value, list):
        for index, item in enumerate(value):
            problem = _type_problem(field.child, item)
            if problem:
                return f"item {index} {problem}"
    return None


class StrictInputSerializer(serializers.Serializer):
    """The base of every operation's JSON body."""

    def to_internal_value(self, data):
        if isinstance(data, Mapping):
            errors = {name: ["unknown field"] for name in sorted(set(data) - set(self.fields))}
            for name, field in self.fields.items():
                if name in data and not field.read_only:
                    problem = _type_problem(field, data[name])
                    if problem:
                        errors[name] = [problem]
            if errors:  # with whatever else is wrong in the rest of the body
                try:
                    super().to_internal_value({k: v for k, v in data.items() if k not in errors})
                except serializers.ValidationError as exc:
                    if isinstance(exc.detail, dict):
                        errors = {**exc.detail, **errors}
                raise serializers.ValidationError(errors)
        return super().to_internal_value(data)

