"""Live updates, the receiving end: a websocket per open page (the overview listens to every
agent, an agent's pages to that agent), joined to the channel-layer group `memories.live`
sends to on commit; each notification is forwarded as JSON and the page re-fetches its fragment
(dashboard/static/dashboard/live.js). Login and the viewers' permission are required, as for the
pages. The routes are in dashboard.routing."""

from __future__ import annotations

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from dashboard.pages import can_view
from memories import selectors
from memories.live import ALL_AGENTS_GROUP, agent_group

FORBIDDEN, NOT_FOUND = 4403, 4404


class LiveConsumer(AsyncJsonWebsocketConsumer):
    group: str | None = None

    async def connect(self):
        user = self.scope.get("user")
        if user is None or not await database_sync_to_async(can_view)(user):
            await self.close(code=FORBIDDEN)
            return
        slug = self.scope["url_route"]["kwargs"].get("agent")
        if slug is not None:
            agent = await database_sync_to_async(selectors.agent_by_slug)(slug=slug)
            if agent is None:
                await self.close(code=NOT_FOUND)
                return
        self.group = agent_group(slug) if slug else ALL_AGENTS_GROUP
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code):
        if self.group:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive_json(self, content, **kwargs):
        pass  # the page only listens

    async def memory_changed(self, message):
        await self.send_json({"agent": message["agent"], "kind": message["kind"], "id": message["id"]})

