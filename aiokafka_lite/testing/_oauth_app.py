"""The WSGI app of :mod:`aiokafka_lite.testing.oauth_server`: authlib's AuthorizationServer over wsgiref.

authlib ships server integrations for Flask and Django only; its framework-free
``AuthorizationServer`` needs the request and response adapters below, nothing else.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import parse_qs

from authlib.oauth2.rfc6749 import AuthorizationServer, ClientMixin, JsonRequest, OAuth2Request
from authlib.oauth2.rfc6749.grants import ClientCredentialsGrant
from authlib.oauth2.rfc6749.requests import BasicOAuth2Payload
from authlib.oauth2.rfc7523 import JWTBearerGrant
from authlib.oauth2.rfc9068 import JWTBearerTokenGenerator
from joserfc.jwk import KeySet, RSAKey, import_key

StartResponse = Callable[[str, list[tuple[str, str]]], Any]


class _Client(ClientMixin):
    def __init__(self, client_id: str, spec: Mapping[str, Any]) -> None:
        self.client_id = client_id
        self.secret = spec.get("secret")
        self.lifetime = int(spec.get("lifetime", 3600))
        self.public_key = spec.get("public_key")

    def get_client_id(self) -> str:
        return self.client_id

    def check_client_secret(self, client_secret: str) -> bool:
        return self.secret is not None and client_secret == self.secret

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method in ("client_secret_basic", "client_secret_post")

    def check_grant_type(self, grant_type: str) -> bool:
        return True

    def get_allowed_scope(self, scope: str) -> str:
        return scope or ""


class _User:
    def __init__(self, name: str) -> None:
        self.name = name

    def get_user_id(self) -> str:
        return self.name


class _Request(OAuth2Request):
    def __init__(self, method: str, uri: str, headers: dict[str, str], form: dict[str, str],
                 args: dict[str, str]) -> None:
        super().__init__(method, uri, headers=headers)
        self.payload = BasicOAuth2Payload(form)
        self._form, self._args = form, args

    @property
    def args(self) -> dict[str, str]:
        return self._args

    @property
    def form(self) -> dict[str, str]:
        return self._form


def make_app(clients: Mapping[str, Mapping[str, Any]], issuer: str) -> Callable[..., Iterable[bytes]]:
    registry = {cid: _Client(cid, spec) for cid, spec in clients.items()}
    signing = KeySet([RSAKey.generate_key(2048, parameters={"kid": "k1", "use": "sig", "alg": "RS256"})])
    return _wsgi(_server(registry, issuer, signing), issuer, signing.as_dict(private=False))


def _server(registry: Mapping[str, _Client], issuer: str, signing: KeySet) -> Any:
    """authlib's token endpoint: client credentials and JWT bearer grants, RS256 tokens signed by
    ``signing``."""

    class Generator(JWTBearerTokenGenerator):
        def get_jwks(self) -> Any:
            return signing.as_dict(private=True)

    class Server(AuthorizationServer):
        def query_client(self, client_id: str) -> _Client | None:
            return registry.get(client_id)

        def save_token(self, token: Any, request: Any) -> None:
            pass

        def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
            pass

        def create_oauth2_request(self, request: Any) -> Any:
            return request

        def create_json_request(self, request: Any) -> Any:
            return JsonRequest(request.method, request.uri, request.headers)

        def handle_response(self, status: int, body: Any, headers: Any) -> Any:
            return status, body, headers

    class JwtBearer(JWTBearerGrant):
        def resolve_issuer_client(self, issuer_: str) -> _Client | None:
            return registry.get(issuer_)

        def resolve_client_public_key(self, client: _Client) -> Any:
            return import_key(str(client.public_key))  # RSA or EC, as the PEM says

        def authenticate_user(self, subject: str) -> _User | None:
            return _User(subject) if subject else None

        def get_audiences(self) -> list[str]:
            return [f"{issuer}/token", issuer]

        def has_granted_permission(self, client: _Client, user: Any) -> bool:
            return True

    def expires_in(client: _Client, grant_type: str) -> int:
        return client.lifetime

    server = Server()
    generator = Generator(issuer, expires_generator=expires_in)
    server.register_token_generator("default", generator)
    server.register_grant(ClientCredentialsGrant)
    server.register_grant(JwtBearer)
    return server


def _wsgi(server: Any, issuer: str, public_jwks: Any) -> Callable[..., Iterable[bytes]]:
    """The WSGI app: ``/jwks`` (the public keys) and ``POST /token``."""

    def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "/")
        if path == "/jwks":
            return _send(start_response, 200, public_jwks, [])
        if path != "/token" or environ["REQUEST_METHOD"] != "POST":
            return _send(start_response, 404, {"error": "not_found"}, [])
        length = int(environ.get("CONTENT_LENGTH") or 0)
        form = {k: v[0] for k, v in parse_qs(environ["wsgi.input"].read(length).decode()).items()}
        headers = {k[5:].replace("_", "-").title(): v for k, v in environ.items() if k.startswith("HTTP_")}
        headers["Content-Type"] = environ.get("CONTENT_TYPE", "")
        request = _Request("POST", f"{issuer}{path}", headers, form, {})
        status, body, extra = server.create_token_response(request)
        return _send(start_response, status, body, extra)

    return app


def _send(start_response: StartResponse, status: int, body: Any, headers: Iterable[tuple[str, str]]
          ) -> list[bytes]:
    data = json.dumps(body).encode()
    names = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found"}
    out = [(k, v) for k, v in headers if k.lower() != "content-type"]
    out += [("Content-Type", "application/json"), ("Content-Length", str(len(data)))]
    start_response(f"{status} {names.get(status, 'Error')}", out)
    return [data]
