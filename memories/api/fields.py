"""Serializer fields with the bounds the storage and the pipelines can handle (the query-parameter
fields the filtersets use are in memories/form_fields.py)."""

from __future__ import annotations

from datetime import UTC

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from memories.form_fields import EARLIEST, LATEST, MAX_ID

MOMENT_HELP = "ISO-8601 date-time; without an offset it is taken as UTC. Years 1000 to 8999."
MAX_INT = 2**53  # JSON-safe integers


class MomentField(serializers.DateTimeField):
    """A timezone-aware datetime within [EARLIEST, LATEST)."""

    default_error_messages = {"out_of_range": "must be between years 1000 and 8999"}

    def __init__(self, **kwargs):
        kwargs.setdefault("help_text", MOMENT_HELP)
        super().__init__(**kwargs)

    def to_internal_value(self, value):
        moment = super().to_internal_value(value)
        if not EARLIEST <= moment < LATEST:
            self.fail("out_of_range")
        return moment.astimezone(UTC)  # PostgreSQL rejects offsets beyond ±15:59 that ISO-8601 allows


def _check_json_value(value, path: str, depth: int = 0) -> None:
    if depth > 8:
        raise serializers.ValidationError(f"{path}: nested too deeply")
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return
    if isinstance(value, int):
        if abs(value) > MAX_INT:
            raise serializers.ValidationError(f"{path}: integer out of range")
        return
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise serializers.ValidationError(f"{path}: must be a finite number")
        return
    if isinstance(value, list):
        for i, item in enumerate(value):
            _check_json_value(item, f"{path}[{i}]", depth + 1)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            _check_json_value(item, f"{path}.{key}", depth + 1)
        return
    raise serializers.ValidationError(f"{path}: unsupported value")


@extend_schema_field({"type": "object", "additionalProperties": True,
                      "description": "Per-call setting overrides, one flat object of setting names to values; "
                                     "unknown names, wrong types and values out of range are a 400."})
class ConfigOverridesField(serializers.DictField):
    """An object of setting names to JSON values (the pipeline validates names, types and ranges)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("child", serializers.JSONField())
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if len(value) > 100:
            raise serializers.ValidationError("too many settings")
        for key, item in value.items():
            _check_json_value(item, key)
        return value


class IdField(serializers.IntegerField):
    def __init__(self, **kwargs):
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", MAX_ID)
        super().__init__(**kwargs)


@extend_schema_field({"type": "object", "additionalProperties": True})
class JsonObjectField(serializers.JSONField):
    """A stored JSON object (free-form by design: metadata, step decisions, run parameters)."""
