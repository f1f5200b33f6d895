"""One JSON shape for every API error: {"error": {"code", "message", "fields"}}."""

from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import JsonResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from memories.errors import DomainError, PayloadTooLarge


def error_body(code: str, message: str, fields: dict | None = None) -> dict:
    return {"error": {"code": code, "message": message, "fields": fields or {}}}


def _first_message(errors) -> str:
    if isinstance(errors, dict):
        name, nested = next(iter(errors.items()), ("", ""))
        return f"{name}: {_first_message(nested)}" if name else ""
    if isinstance(errors, list | tuple):
        return _first_message(errors[0]) if errors else ""
    return str(errors)


def validation_message(detail: dict) -> str:
    parts = [f"{name}: {_first_message(errors)}" for name, errors in detail.items()]
    return "invalid input: " + "; ".join(parts)


def exception_handler(exc, context):
    if isinstance(exc, OperationalError | InterfaceError):
        # the database is down or restarting: fail fast and say when to try again, never a 500
        return Response(error_body("unavailable", "the database is unavailable; try again shortly"),
                        status=status.HTTP_503_SERVICE_UNAVAILABLE, headers={"Retry-After": "5"})
    if isinstance(exc, RequestDataTooBig):
        exc = PayloadTooLarge("request body is too large", {"body": str(exc)})
    if isinstance(exc, DomainError):
        return Response(error_body(exc.code, exc.message, exc.extra), status=exc.http_status)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    detail = response.data
    code = getattr(exc, "default_code", "error")
    if isinstance(detail, dict) and "detail" in detail:
        fields, message = {}, str(detail["detail"])
        code = getattr(detail["detail"], "code", None) or code
    elif isinstance(detail, dict):
        fields, message = detail, validation_message(detail)
    elif isinstance(detail, list):
        fields, message = {"non_field_errors": detail}, "; ".join(str(d) for d in detail) or "invalid input"
    else:
        fields, message = {}, str(detail)
    response.data = error_body(code, message, fields)
    if response.status_code >= 500:
        response.status_code = status.HTTP_400_BAD_REQUEST
    return response


@csrf_exempt
def not_found_view(request, *args, **kwargs):
    """Unknown URLs under the API answer in the API's error shape."""
    hint = "" if request.path.endswith("/") else " (API paths end with '/')"
    return JsonResponse(error_body("not_found", f"no API endpoint at {request.path}{hint}"), status=404)
