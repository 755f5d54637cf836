"""The `auth` section (SPEC §3.9, §4): people signing in through the organisation's
identity provider, whose access tokens are principals beside API keys."""

from __future__ import annotations

import ipaddress
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import Field, field_validator, model_validator

from app.config.base import EnvVarName, HttpUrl, Name, NonEmpty, Strict
from app.domain.tools.specs import Role

RoleName = Annotated[Role, Field(strict=False)]


def loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class OidcConfig(Strict):
    """An OpenID Connect issuer whose access tokens (JWTs) are principals; with a
    `client_id`, the console offers "Sign in with SSO" through it (the authorization
    code flow with PKCE)."""

    issuer: HttpUrl
    audience: NonEmpty  # the `aud` every access token must carry
    tenant: Name | None = None  # every token's tenant, or
    tenant_claim: NonEmpty | None = None  # the claim that names it
    subject_claim: NonEmpty = "sub"
    roles_claim: NonEmpty = "roles"
    #: A value of the roles claim (a group, say) → the roles it grants.
    roles: dict[NonEmpty, list[RoleName]] = {}
    #: The console's client at the provider (none: no "Sign in with SSO").
    client_id: NonEmpty | None = None
    client_secret_env: EnvVarName | None = None  # unset: a public client (PKCE only)
    scopes: list[NonEmpty] = ["openid", "profile", "email"]
    #: Where the provider sends people back; default: TOOLGATE_PUBLIC_URL's (or the
    #: request's) `/console/sso/callback`.
    redirect_uri: HttpUrl | None = None

    @field_validator("issuer")
    @classmethod
    def _https_or_loopback(cls, issuer: str) -> str:
        parts = urlsplit(issuer)
        if parts.scheme != "https" and not loopback(parts.hostname or ""):
            raise ValueError("an issuer is https, or http on a loopback address only")
        return issuer

    @model_validator(mode="after")
    def _one_tenant(self) -> OidcConfig:
        if (self.tenant is None) == (self.tenant_claim is None):
            raise ValueError("give `tenant` (every token's) or `tenant_claim`, one of them")
        if self.client_id is None and self.client_secret_env is not None:
            raise ValueError("`client_secret_env` is the secret of a `client_id`: give both")
        if "openid" not in self.scopes:
            raise ValueError("`scopes` must include `openid`")
        return self


class AuthConfig(Strict):
    oidc: OidcConfig | None = None
