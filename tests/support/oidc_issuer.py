"""An OpenID Connect issuer on loopback, for the token tests: it serves its discovery
document and its JWKS (counting the fetches), and mints access tokens with its keys — or
with any key a test gives, to forge one."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.support.backend import serving_app

AUDIENCE = "toolgate"

PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey


def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _jwk(kid: str, key: PrivateKey) -> dict[str, Any]:
    algorithm = jwt.algorithms.RSAAlgorithm if isinstance(key, rsa.RSAPrivateKey) else None
    if algorithm is None:
        public = jwt.algorithms.ECAlgorithm.to_jwk(key.public_key(), as_dict=True)
        return {**public, "kid": kid, "use": "sig", "alg": "ES256"}
    public = algorithm.to_jwk(key.public_key(), as_dict=True)
    return {**public, "kid": kid, "use": "sig", "alg": "RS256"}


@dataclass
class Issuer:
    url: str = ""
    keys: dict[str, PrivateKey] = field(default_factory=dict)
    jwks_fetches: int = 0

    @property
    def issuer(self) -> str:
        return f"{self.url}/"

    def add_key(self, kid: str, key: PrivateKey | None = None) -> PrivateKey:
        self.keys[kid] = key or rsa_key()
        return self.keys[kid]

    def token(
        self,
        *,
        kid: str = "k1",
        key: Any = None,
        algorithm: str | None = None,
        lifetime_s: float = 300,
        **claims: Any,
    ) -> str:
        """An access token: subject `alice`, this issuer, the audience, valid for
        `lifetime_s`; `claims` added or replaced (None drops one)."""
        now = time.time()
        body: dict[str, Any] = {
            "iss": self.issuer,
            "aud": AUDIENCE,
            "sub": "alice",
            "iat": int(now),
            "exp": int(now + lifetime_s),
            **claims,
        }
        body = {k: v for k, v in body.items() if v is not None}
        signer = key if key is not None else self.keys[kid]
        if algorithm is None:
            algorithm = "RS256" if isinstance(signer, rsa.RSAPrivateKey) else "ES256"
        return jwt.encode(body, signer, algorithm=algorithm, headers={"kid": kid})

    async def _discovery(self, request: Request) -> JSONResponse:
        return JSONResponse({"issuer": self.issuer, "jwks_uri": f"{self.url}/jwks"})

    async def _jwks(self, request: Request) -> JSONResponse:
        self.jwks_fetches += 1
        return JSONResponse({"keys": [_jwk(kid, key) for kid, key in self.keys.items()]})


@asynccontextmanager
async def issuing() -> AsyncIterator[Issuer]:
    issuer = Issuer()
    issuer.add_key("k1")
    app = Starlette(
        routes=[
            Route("/.well-known/openid-configuration", issuer._discovery),
            Route("/jwks", issuer._jwks),
        ]
    )
    async with serving_app(app) as url:
        issuer.url = url
        yield issuer
