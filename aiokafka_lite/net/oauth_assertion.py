"""Client assertions for the jwt-bearer grant (RFC 7523, KIP-1139): from a file, or signed here.

``sasl_oauthbearer_assertion_file`` names a file holding a ready assertion (re-read at every fetch,
so whatever rotates it is picked up). Otherwise an assertion is built and signed with the private
key in ``sasl_oauthbearer_assertion_private_key_file`` (PEM; RS256 or ES256 as
``sasl_oauthbearer_assertion_algorithm`` says), with the claims KIP-1139 configures: ``iss``,
``sub``, ``aud``, ``iat``, ``exp`` (iat + ``..._claim_exp_seconds``), ``nbf`` (iat -
``..._claim_nbf_seconds``) and a random ``jti`` if ``..._claim_jti_include``. Signing needs the
``cryptography`` package (the ``oauth`` extra), imported only here.
"""

from __future__ import annotations

import base64
import json
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import AuthenticationFailedError, ConfigError

__all__ = ["AssertionSigner", "assertion_from_config"]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _read(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise AuthenticationFailedError(f"cannot read the {what} {path}: {exc}") from None


class AssertionSigner:
    """Builds and signs one fresh assertion per call."""

    def __init__(
        self,
        key_pem: bytes,
        *,
        algorithm: str = "RS256",
        passphrase: str | None = None,
        issuer: str | None = None,
        subject: str | None = None,
        audience: str | None = None,
        exp_seconds: int = 300,
        nbf_seconds: int = 60,
        include_jti: bool = False,
        extra_claims: dict[str, Any] | None = None,
    ) -> None:
        try:
            from cryptography.hazmat.primitives import serialization
        except ImportError:
            raise ConfigError("signing a jwt-bearer assertion needs the 'cryptography' package: "
                              "pip install 'aiokafka_lite[oauth]'") from None
        if algorithm not in ("RS256", "ES256"):
            raise ConfigError(
                f"sasl_oauthbearer_assertion_algorithm must be RS256 or ES256, got {algorithm!r}"
            )
        try:
            self._key: Any = serialization.load_pem_private_key(
                key_pem, password=passphrase.encode() if passphrase else None
            )
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"cannot load the assertion private key: {exc}") from None
        self.algorithm = algorithm
        self._claims = {k: v for k, v in (("iss", issuer), ("sub", subject), ("aud", audience)) if v}
        self._claims.update(extra_claims or {})
        self._exp, self._nbf, self._jti = exp_seconds, nbf_seconds, include_jti

    def __call__(self) -> str:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec, padding, utils

        now = int(time.time())
        claims: dict[str, Any] = {**self._claims, "iat": now, "exp": now + self._exp, "nbf": now - self._nbf}
        if self._jti:
            claims["jti"] = secrets.token_hex(16)
        header = {"alg": self.algorithm, "typ": "JWT"}
        signing_input = (_b64(json.dumps(header).encode()) + "." + _b64(json.dumps(claims).encode())).encode()
        if self.algorithm == "RS256":
            signature = self._key.sign(signing_input, padding.PKCS1v15(), hashes.SHA256())
        else:  # ES256: JWS wants r || s, 32 bytes each, not DER
            r, s = utils.decode_dss_signature(self._key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
            signature = r.to_bytes(32, "big") + s.to_bytes(32, "big")
        return signing_input.decode() + "." + _b64(signature)


def assertion_from_config(config: Any) -> Callable[[], str]:
    """The assertion source the KIP-1139 settings describe."""
    path = config.sasl_oauthbearer_assertion_file
    if path:
        return lambda: _read(path, "assertion file").decode().strip()
    template: dict[str, Any] = {}
    if config.sasl_oauthbearer_assertion_template_file:
        try:
            text = _read(config.sasl_oauthbearer_assertion_template_file, "assertion template")
            template = json.loads(text)
        except ValueError as exc:
            raise ConfigError(f"the assertion template is not JSON: {exc}") from None
    return AssertionSigner(
        _read(config.sasl_oauthbearer_assertion_private_key_file, "assertion private key"),
        algorithm=config.sasl_oauthbearer_assertion_algorithm,
        passphrase=config.sasl_oauthbearer_assertion_private_key_passphrase,
        issuer=config.sasl_oauthbearer_assertion_claim_iss,
        subject=config.sasl_oauthbearer_assertion_claim_sub,
        audience=config.sasl_oauthbearer_assertion_claim_aud,
        exp_seconds=config.sasl_oauthbearer_assertion_claim_exp_seconds,
        nbf_seconds=config.sasl_oauthbearer_assertion_claim_nbf_seconds,
        include_jti=config.sasl_oauthbearer_assertion_claim_jti_include,
        extra_claims=template.get("payload") if isinstance(template.get("payload"), dict) else template,
    )
