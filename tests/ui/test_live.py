"""Live updates: a write committed through the service reaches the consumer of the agent's
group (and the overview's), as a small JSON notification; strangers are refused."""

import json

import pytest
from asgiref.sync import async_to_sync
from asgiref.testing import ApplicationCommunicator
from channels.db import database_sync_to_async
from channels.routing import URLRouter

from dashboard.routing import websocket_urlpatterns
from memories.services.write import memory_write


class Socket(ApplicationCommunicator):
    """A websocket client for an ASGI app (channels.testing would import daphne, which the
    project does not use)."""

    def __init__(self, path, user):
        super().__init__(URLRouter(websocket_urlpatterns), {
            "type": "websocket", "path": path, "raw_path": path.encode(), "query_string": b"", "headers": [],
            "subprotocols": [], "user": user})

    async def connect(self, timeout=5):
        await self.send_input({"type": "websocket.connect"})
        answer = await self.receive_output(timeout)
        return answer["type"] == "websocket.accept", answer.get("code")

    async def receive_json_from(self, timeout=5):
        answer = await self.receive_output(timeout)
        assert answer["type"] == "websocket.send", answer
        return json.loads(answer["text"])

    async def disconnect(self, code=1000, timeout=5):
        await self.send_input({"type": "websocket.disconnect", "code": code})
        await self.wait(timeout)


def _connect(path, user):
    return Socket(path, user)


@pytest.mark.django_db(transaction=True)
def test_a_committed_write_is_forwarded_to_the_agents_and_the_overviews_sockets(demo, viewer):
    async def scenario():
        home, overview = _connect("/ws/ui/agents/demo/", viewer), _connect("/ws/ui/", viewer)
        assert (await home.connect())[0] and (await overview.connect())[0]
        await database_sync_to_async(memory_write)(agent=demo, message="I adopted a dog called Pixel.",
                                                   speaker_name="Rafael")
        seen = [await home.receive_json_from(timeout=10), await home.receive_json_from(timeout=10)]
        assert [m["kind"] for m in seen] == ["event", "run"] and all(m["agent"] == "demo" for m in seen)
        assert (await overview.receive_json_from(timeout=10))["kind"] == "event"
        await home.disconnect()
        await overview.disconnect()

    async_to_sync(scenario)()


@pytest.mark.django_db(transaction=True)
def test_anonymous_users_and_unknown_agents_are_refused(demo, viewer):
    from django.contrib.auth.models import AnonymousUser

    async def scenario():
        anonymous = _connect("/ws/ui/agents/demo/", AnonymousUser())
        connected, code = await anonymous.connect()
        assert not connected and code == 4403
        unknown = _connect("/ws/ui/agents/nobody/", viewer)
        connected, code = await unknown.connect()
        assert not connected and code == 4404

    async_to_sync(scenario)()
