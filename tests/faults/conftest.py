from tests.api.conftest import _fresh_throttle_cache, api, client_for, make_key  # noqa: F401
