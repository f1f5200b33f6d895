"""Throttling per API key (or per logged-in user), at the rate in REST_FRAMEWORK
DEFAULT_THROTTLE_RATES["api"], read on every request so settings changes apply at once."""

from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

from memories.api.auth import principal_of


class PrincipalRateThrottle(SimpleRateThrottle):
    scope = "api"

    def get_rate(self):
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def get_cache_key(self, request, view):
        principal = principal_of(request)
        if principal is None:
            return None
        return self.cache_format % {"scope": self.scope, "ident": principal.ident}

