"""A model provider built on its first call: a provider SDK (tens of MB of typed models) is
imported only by a process that routes a call to it, not by every process whose config
merely names the route."""

from __future__ import annotations

from collections.abc import Callable

from app.domain.model.replies import ModelReply, ModelRequest
from app.domain.ports import ModelProvider


class OnFirstCall:
    def __init__(self, build: Callable[[], ModelProvider]) -> None:
        self._build = build
        self._model: ModelProvider | None = None

    async def complete(self, request: ModelRequest) -> ModelReply:
        if self._model is None:
            self._model = self._build()
        return await self._model.complete(request)
