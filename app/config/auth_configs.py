"""The `auth` section (SPEC §3.9, §4): people signing in through the organisation's
identity provider, whose access tokens are principals beside API keys."""

from __future__ import annotations

import ipaddress
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import Field, field_validator, model_validator

from app.config.base import HttpUrl, Name, NonEmpty, Strict
from app.domain.tools.specs import Role

RoleName = Annotated[Role, Field(strict=False)]


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class OidcConfig(Strict):
    """An OpenID Connect issuer whose access tokens (JWTs) are principals. (The console's
    sign-in through it, and so its client id and secret, are not built yet: refused as
    unknown keys rather than taken and ignored.)"""

    issuer: HttpUrl
    audience: NonEmpty  # the `aud` every access token must carry
    tenant: Name | None = None  # every token's tenant, or
    tenant_claim: NonEmpty | None = None  # the claim that names it
    subject_claim: NonEmpty = "sub"
    roles_claim: NonEmpty = "roles"
    #: A value of the roles claim (a group, say) → the roles it grants.
    roles: dict[NonEmpty, list[RoleName]] = {}

    @field_validator("issuer")
    @classmethod
    def _https_or_loopback(cls, issuer: str) -> str:
        parts = urlsplit(issuer)
        if parts.scheme != "https" and not _loopback(parts.hostname or ""):
            raise ValueError("an issuer is https, or http on a loopback address only")
        return issuer

    @model_validator(mode="after")
    def _one_tenant(self) -> OidcConfig:
        if (self.tenant is None) == (self.tenant_claim is None):
            raise ValueError("give `tenant` (every token's) or `tenant_claim`, one of them")
        return self


class AuthConfig(Strict):
    oidc: OidcConfig | None = None
