"""One JSON shape for every API error: {"error": {"code", "message", "fields"}}."""

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from memories.errors import DomainError


def exception_handler(exc, context):
    if isinstance(exc, DomainError):
        return Response(
            {"error": {"code": exc.code, "message": exc.message, "fields": exc.extra}},
            status=exc.http_status,
        )
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    detail = response.data
    fields = detail if isinstance(detail, dict) and "detail" not in detail else {}
    message = detail.get("detail") if isinstance(detail, dict) and "detail" in detail else "invalid input"
    code = getattr(exc, "default_code", "error")
    response.data = {"error": {"code": code, "message": str(message), "fields": fields}}
    if response.status_code >= 500:
        response.status_code = status.HTTP_400_BAD_REQUEST
    return response
