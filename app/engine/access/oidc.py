"""OpenID Connect access tokens as principals beside API keys (SPEC §3.9).

A token is a JWT from the configured issuer: its signing key is found by `kid` in the
issuer's JWKS (discovered from `/.well-known/openid-configuration`, kept, fetched again on
an unknown `kid` at most every `REFETCH_EVERY_S`, and after `KEYS_KEPT_S`); its `iss`,
`aud`, `exp` and `nbf` are checked with `LEEWAY_S` of leeway, by PyJWT (no JOSE code of
ours). Only asymmetric algorithms are taken: a token signed with `none`, or with an HMAC
keyed by a public key, never verifies. Whatever makes a token fail, the answer is the same
(None: `401 unauthenticated`), and the token is never logged.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

import httpx
import jwt

from app.config.auth_configs import OidcConfig
from app.domain.tools.specs import Principal

log = logging.getLogger(__name__)

ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
LEEWAY_S = 60
REFETCH_EVERY_S = 30.0
KEYS_KEPT_S = 3600.0
#: A longer bearer is no access token any issuer makes: refused before it is parsed.
MAX_TOKEN_CHARS = 16_384
MAX_SUBJECT_CHARS = 200
MAX_TENANT_CHARS = 64  # as a tenant id is stored
FETCH_TIMEOUT_S = 5.0


class OidcVerifier:
    def __init__(
        self, config: OidcConfig, http: httpx.AsyncClient, monotonic: Callable[[], float]
    ) -> None:
        self.config = config
        self._http = http
        self._now = monotonic
        self._keys: dict[str | None, jwt.PyJWK] = {}
        self._fetched_at: float | None = None
        self._fetching = asyncio.Lock()
        self._discovery: dict[str, Any] | None = None

    @property
    def http(self) -> httpx.AsyncClient:
        return self._http

    async def principal(self, token: str) -> Principal | None:
        """The token's principal (its roles may be none: the caller refuses it), or None
        when it does not verify, whatever the reason."""
        claims = await self.claims(token, self.config.audience)
        return None if claims is None else self.principal_of(claims)

    async def claims(self, token: str, audience: str) -> dict[str, Any] | None:
        """A JWT's claims when it verifies (the issuer's key, `iss`, `aud` = `audience`,
        `exp`, `nbf`), else None, whatever the reason: an access token's, or (with the
        console's client as its audience) an id token's."""
        if not token or len(token) > MAX_TOKEN_CHARS:
            return None
        try:
            header = jwt.get_unverified_header(token)
            algorithm = header.get("alg")
            if algorithm not in ALGORITHMS:
                return None
            key = await self._key(header.get("kid"))
            if key is None:
                return None
            return jwt.decode(
                token,
                key.key,
                algorithms=[algorithm],
                audience=audience,
                issuer=self.config.issuer,
                leeway=LEEWAY_S,
                options={"require": ["exp", "iss", "aud"]},
            )
        except (jwt.PyJWTError, ValueError, TypeError) as exc:
            log.debug("a token was refused (%s)", type(exc).__name__)
            return None

    async def endpoint(self, name: str) -> str | None:
        """An address the discovery document gives (`token_endpoint`, say), read with the
        keys (and again when they are)."""
        if self._discovery is None:
            await self._fetch()
        value = (self._discovery or {}).get(name)
        return (
            value if isinstance(value, str) and value.startswith(("https://", "http://")) else None
        )

    def principal_of(self, claims: Mapping[str, Any]) -> Principal | None:
        config = self.config
        subject = claims.get(config.subject_claim)
        tenant = config.tenant or claims.get(config.tenant_claim or "")
        if not _name(subject, MAX_SUBJECT_CHARS) or not _name(tenant, MAX_TENANT_CHARS):
            return None
        granted = {
            role.value
            for value in _values(claims.get(config.roles_claim))
            for role in config.roles.get(value, [])
        }
        scopes = _values(claims.get("scope", claims.get("scp")))
        has_scopes = "scope" in claims or "scp" in claims
        return Principal(
            tenant_id=tenant,
            subject=subject,
            roles=frozenset(granted),
            scopes=frozenset(scopes) if has_scopes else None,
        )

    async def _key(self, kid: Any) -> jwt.PyJWK | None:
        """The issuer's key `kid` (a set of one key may go unnamed), fetched again when it
        is unknown, at most every REFETCH_EVERY_S."""
        age = None if self._fetched_at is None else self._now() - self._fetched_at
        known = self._found(kid)
        if known is not None and age is not None and age <= KEYS_KEPT_S:
            return known
        if age is None or age >= REFETCH_EVERY_S:
            await self._fetch()
        return self._found(kid)

    def _found(self, kid: Any) -> jwt.PyJWK | None:
        if kid is None and len(self._keys) == 1:
            return next(iter(self._keys.values()))
        return self._keys.get(kid) if isinstance(kid, str) else None

    async def _fetch(self) -> None:
        async with self._fetching:
            if self._fetched_at is not None and self._now() - self._fetched_at < 1.0:
                return  # fetched by another request a moment ago
            try:
                keys = await self._fetch_keys()
            except (httpx.HTTPError, ValueError, TypeError, KeyError, jwt.PyJWTError) as exc:
                log.warning("the OIDC issuer's keys could not be fetched (%s)", type(exc).__name__)
                return
            finally:
                self._fetched_at = self._now()
            self._keys = keys

    async def _fetch_keys(self) -> dict[str | None, jwt.PyJWK]:
        issuer = self.config.issuer
        discovery = f"{issuer.rstrip('/')}/.well-known/openid-configuration"
        found = await self._json(discovery)
        if found.get("issuer") != issuer:
            raise ValueError("the discovery document names another issuer")
        self._discovery = found
        uri = found.get("jwks_uri")
        if not isinstance(uri, str):
            raise ValueError("the discovery document has no jwks_uri")
        keys = jwt.PyJWKSet.from_dict(await self._json(uri)).keys
        return {key.key_id: key for key in keys}

    async def _json(self, url: str) -> dict[str, Any]:
        response = await self._http.get(url, timeout=FETCH_TIMEOUT_S)
        response.raise_for_status()
        document = response.json()
        if not isinstance(document, dict):
            raise ValueError("not a JSON object")
        return document


def _name(value: Any, most: int) -> bool:
    return isinstance(value, str) and 0 < len(value) <= most and value.isprintable()


def _values(claim: Any) -> list[str]:
    """A claim as a list of strings: a list's strings, or a string's space-separated words."""
    if isinstance(claim, str):
        return claim.split()
    if isinstance(claim, list):
        return [v for v in claim if isinstance(v, str)]
    return []
