"""OpenAPI details drf-spectacular cannot infer: the bearer-key scheme, the `{agent}` slug and
`{id}` path parameters, and the one error shape on every operation's 4xx responses."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension

ERROR_RESPONSES = {
    "400": "Invalid input: `error.fields` names each offending field.",
    "401": "Missing, unknown or revoked API key.",
    "403": "The key's scope does not allow this operation.",
    "404": "No such object for this key (another agent's objects are reported as missing too).",
    "405": "Method not allowed.",
    "406": "Not acceptable.",
    "409": "The operation does not apply to the object's current state (e.g. a closed version: "
           "`error.fields.current` names the current one).",
    "413": "Request body or message too large.",
    "415": "Unsupported media type: send JSON.",
    "429": "Too many requests for this key; see Retry-After.",
}
PUBLIC_ERRORS = ("400", "404", "405", "406", "415")
ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "fields"],
            "properties": {
                "code": {"type": "string", "description": "stable machine-readable code (invalid, not_found, …)"},
                "message": {"type": "string", "description": "human-readable explanation"},
                "fields": {"type": "object", "additionalProperties": True,
                           "description": "details by field name (may be empty)"},
            },
        }
    },
}
AGENT_PARAMETER = {"type": "string", "pattern": "^[-a-zA-Z0-9_]+$", "maxLength": 100}
ID_PARAMETER = {"type": "integer", "minimum": 1, "maximum": 10**18 - 1}  # views_base.ID_REGEX


class BearerKeyScheme(OpenApiAuthenticationExtension):
    target_class = "memories.api.auth.BearerKeyAuthentication"
    name = "apiKey"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer",
                "description": "An API key from `manage.py create_api_key`: `Authorization: Bearer anm_…`"}


def add_error_responses(result, generator, request, public):
    """Postprocessing hook: the Error component, documented error responses, typed path params;
    operation bodies are closed objects (StrictInputSerializer: an unknown field is a 400)."""
    for name, component in result.get("components", {}).get("schemas", {}).items():
        if name.endswith("Request") and component.get("type") == "object" and "properties" in component:
            component.setdefault("additionalProperties", False)
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    for route, operations in result.get("paths", {}).items():
        for operation in operations.values():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            operation["tags"] = [_tag(route)]
            secured = operation.get("security") != [{}] and operation.get("security") != []
            codes = ERROR_RESPONSES if secured else {c: ERROR_RESPONSES[c] for c in PUBLIC_ERRORS}
            for code, description in codes.items():
                operation["responses"].setdefault(code, {
                    "description": description,
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
                })
            for code, response in operation["responses"].items():  # a view's own 4xx (e.g. 422): the same shape
                if str(code).startswith("4") and "content" not in response:
                    response["content"] = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
            for parameter in operation.get("parameters", []):
                if parameter.get("in") != "path":
                    continue
                if parameter["name"] == "agent":
                    parameter["schema"] = dict(AGENT_PARAMETER)
                    parameter["description"] = "agent slug"
                elif parameter["name"] == "id":
                    parameter["schema"] = dict(ID_PARAMETER)
    return result


def _tag(route: str) -> str:
    """/api/v1/agents/{agent}/facts/{id}/ → facts; /api/v1/health/ → health."""
    parts = [p for p in route.split("/") if p and not p.startswith("{")][2:]
    if parts[:1] == ["agents"] and len(parts) > 1:
        return parts[1]
    return parts[0] if parts else "api"
