"""What the provider adapters share: the route's model id, its API key from the environment
variable the route names, and the provider's SDK client built on the service's shared
`httpx.AsyncClient` with the SDK's own retries off (the executor alone retries)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from types import ModuleType
from typing import Any, ClassVar

import httpx

from app.adapters.model.provider_errors import from_sdk
from app.config.models import ModelRouteConfig
from app.domain.model.replies import ModelError, ModelReply, ModelRequest

#: Each provider's conventional API-key variable, when a route names none of its own.
DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


def key_env_of(route: ModelRouteConfig) -> str | None:
    """The variable a route's API key is read from (what telemetry must also redact)."""
    return route.api_key_env or DEFAULT_KEY_ENV.get(route.provider)


class SdkModel:
    #: The provider's conventional base-URL variable, when the route names no URL.
    URL_ENV: ClassVar[str]
    #: The provider's SDK module (imported by the adapter, on a route's first call).
    SDK: ClassVar[ModuleType]

    def __init__(
        self,
        route: ModelRouteConfig,
        client: httpx.AsyncClient,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        environ = os.environ if environ is None else environ
        assert route.model is not None  # the config loader requires it
        self.model = route.model
        key_env = key_env_of(route)
        assert key_env is not None  # an SDK provider has a default
        self.key_env = key_env
        key = environ.get(self.key_env) or None
        base_url = str(route.base_url) if route.base_url else environ.get(self.URL_ENV)
        self._ready = key is not None
        self._sdk = self.sdk(
            api_key=key or "unset", base_url=base_url or None, http_client=client, max_retries=0
        )

    def sdk(self, **options: Any) -> Any:
        raise NotImplementedError

    async def complete(self, request: ModelRequest) -> ModelReply:
        if not self._ready:
            raise ModelError(
                "auth", f"the route's API key is not set ({self.key_env})", retryable=False
            )
        try:
            return await self.call(request)
        except self.SDK.APIError as exc:
            raise from_sdk(exc, self.SDK, context_too_long=self.context_too_long) from None

    async def call(self, request: ModelRequest) -> ModelReply:
        """One call through the SDK; its failures are turned into `ModelError`s above."""
        raise NotImplementedError

    @staticmethod
    def context_too_long(exc: Any) -> bool:
        """Whether a status failure says the request is too long for the model."""
        raise NotImplementedError
