"""Java client settings (``kafka.*`` options of Spark Kafka jobs) translated to this client's settings.

Spark passes ``kafka.*`` options to the Java client, so existing jobs carry Java-only names and value
formats: a JAAS line for SASL credentials, truststore files for a private CA, Java class names for
the partitioner. :func:`translate` turns the ones that have an equivalent here into our settings and
refuses the rest with a :class:`ConfigError` naming the option, at ``load()`` / ``save()``.

Options must pickle to executors, and an ``ssl.SSLContext`` does not: the CA travels as PEM text
(``_SSL_CADATA``) and each process builds its context from it (:func:`live_settings`), once per
distinct CA, so that the per-process client cache keeps one client per configuration.
"""

from __future__ import annotations

import re
import ssl
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import ConfigError

__all__ = ["bootstrap_text", "live_settings", "translate"]


def bootstrap_text(value: Any) -> str:
    """Parsed ``bootstrap_servers`` (a list of (host, port)) as ``host:port,host:port`` for messages."""
    if isinstance(value, (list, tuple)):
        return ",".join(f"{x[0]}:{x[1]}" if isinstance(x, (list, tuple)) and len(x) == 2 else str(x)
                        for x in value)
    return str(value)

#: Keys of the parsed client settings that carry TLS material instead of an SSLContext.
_SSL_CADATA = "_ssl_cadata"
_SSL_CHECK_HOSTNAME = "_ssl_check_hostname"

_JAAS_MODULES = {
    "org.apache.kafka.common.security.plain.PlainLoginModule": "PLAIN",
    "org.apache.kafka.common.security.scram.ScramLoginModule": "SCRAM",
}
_OAUTH_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
#: Java's built-in OIDC login handler (KIP-768; both its package names): this client fetches tokens itself.
_OAUTH_LOGIN_HANDLERS = {
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
    "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler",
}
#: KIP-1139's names for the client credentials, and ours.
_OAUTH_ALIASES = {
    "sasl.oauthbearer.client.credentials.client.id": "sasl.oauthbearer.client.id",
    "sasl.oauthbearer.client.credentials.client.secret": "sasl.oauthbearer.client.secret",
}
_JAAS_REFUSED = {
    "com.sun.security.auth.module.Krb5LoginModule":
        "SASL/GSSAPI (Kerberos) is not supported by the data source yet",
}
_PARTITIONERS = {
    "org.apache.kafka.clients.producer.internals.DefaultPartitioner": "default",
    "org.apache.kafka.clients.producer.RoundRobinPartitioner": "round_robin",
    "org.apache.kafka.clients.producer.UniformStickyPartitioner": "uniform_sticky",
}
#: Java settings with no equivalent here; refused rather than silently ignored.
_REFUSED_PREFIXES = {
    "ssl.keystore.": "client certificates (mutual TLS) are not supported by the data source yet",
    "sasl.kerberos.": "SASL/GSSAPI (Kerberos) is not supported by the data source yet",
    "sasl.oauthbearer.": "a broker-side or Java-class OAUTHBEARER setting (see docs/security.md for the "
                         "client's)",
    "sasl.login.": "SASL login callbacks are Java classes; give username and password in sasl.jaas.config "
                   "(or, for OAUTHBEARER, the OAuthBearerLoginModule options)",
    "sasl.client.callback.handler.class": "SASL callback handlers are Java classes",
    "ssl.key.password": "client certificates (mutual TLS) are not supported by the data source yet",
    "ssl.engine.factory.class": "TLS engine factories are Java classes",
    "ssl.trustmanager.algorithm": "trust managers are Java's; give the CA as a PEM truststore",
    "ssl.keymanager.algorithm": "key managers are Java's",
    "ssl.provider": "security providers are Java's",
    "ssl.secure.random.implementation": "SecureRandom implementations are Java's",
    "security.providers": "security providers are Java's",
}
#: Java settings accepted and dropped: Python's ssl module negotiates the protocol itself.
_DROPPED = {"ssl.protocol", "ssl.enabled.protocols", "ssl.cipher.suites", "ssl.truststore.password"}

_JAAS = re.compile(r"^\s*(?P<module>[\w.$]+)\s+(?P<flag>required|requisite|sufficient|optional)"
                   r"(?P<opts>.*?);?\s*$", re.DOTALL)
_JAAS_OPT = re.compile(r'\s*([\w.-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|(\S+))')


def _parse_jaas(value: str) -> tuple[str, dict[str, str]]:
    match = _JAAS.match(value)
    if match is None:
        raise ConfigError("option 'kafka.sasl.jaas.config' must look like '<LoginModule class> required "
                          "username=\"...\" password=\"...\";'")
    opts: dict[str, str] = {}
    rest = match.group("opts").strip().rstrip(";")
    pos = 0
    while pos < len(rest):
        opt = _JAAS_OPT.match(rest, pos)
        if opt is None:
            if rest[pos:].strip():
                raise ConfigError(f"option 'kafka.sasl.jaas.config': cannot parse {rest[pos:].strip()!r}")
            break
        raw = opt.group(2)
        opts[opt.group(1)] = re.sub(r"\\(.)", r"\1", raw) if raw is not None else opt.group(3)
        pos = opt.end()
    return match.group("module"), opts


def _read_pem(option: str, text: str) -> str:
    if "-----BEGIN CERTIFICATE-----" not in text:
        raise ConfigError(f"option {option!r} must hold PEM certificates (-----BEGIN CERTIFICATE-----)")
    try:
        ssl.create_default_context(cadata=text)
    except (ssl.SSLError, ValueError) as exc:
        raise ConfigError(f"option {option!r}: not a usable PEM certificate: {exc}") from None
    return text


def _oauth_setting(name: str) -> str | None:
    """Our dotted name for a Java OAUTHBEARER client setting we have (None: not one of those)."""
    from ..config import COMMON  # config is a base module; imported late to keep this module light

    name = _OAUTH_ALIASES.get(name, name)
    if name.startswith(("sasl.oauthbearer.", "sasl.login.")) and name.replace(".", "_") in {
            s.name for s in COMMON}:
        return name
    return None


def _oauth_jaas(option: str, opts: Mapping[str, str], out: dict[str, Any]) -> None:
    """OAuthBearerLoginModule's options (clientId, clientSecret, scope, extension_NAME) to our settings."""
    unsecured = [k for k in opts if k.startswith("unsecuredLogin")]
    if unsecured:
        raise ConfigError(f"option {option!r}: unsecured (unsigned) tokens ({unsecured[0]}) are not "
                          "supported; give clientId and clientSecret with "
                          "kafka.sasl.oauthbearer.token.endpoint.url")
    for key, ours in (("clientId", "sasl.oauthbearer.client.id"), ("scope", "sasl.oauthbearer.scope"),
                      ("clientSecret", "sasl.oauthbearer.client.secret")):
        if key in opts:
            out[ours] = opts[key]
    extensions = {k[len("extension_"):]: v for k, v in opts.items() if k.startswith("extension_")}
    if extensions:
        out["sasl.oauthbearer.extensions"] = extensions
    known = {"clientId", "clientSecret", "scope"} | {f"extension_{k}" for k in extensions}
    unknown = sorted(set(opts) - known)
    if unknown:
        raise ConfigError(f"option {option!r}: OAuthBearerLoginModule option {unknown[0]!r} is not supported")


def translate(settings: Mapping[str, str]) -> dict[str, Any]:
    """Java-named settings (dotted, without ``kafka.``) to ours; the others pass through unchanged."""
    out: dict[str, Any] = {}
    jaas_user: tuple[str, str, str] | None = None
    oauth_module = False
    for name, value in settings.items():
        option = f"kafka.{name}"
        if name == "sasl.login.callback.handler.class" and value in _OAUTH_LOGIN_HANDLERS:
            continue  # Java's way of asking for built-in token fetching: what this client does
        if (ours := _oauth_setting(name)) is not None:
            out[ours] = value
            continue
        refused = next((why for prefix, why in _REFUSED_PREFIXES.items() if name.startswith(prefix)), None)
        if refused is not None:
            raise ConfigError(f"option {option!r} is not supported: {refused}")
        if name in _DROPPED:
            continue
        if name == "sasl.jaas.config":
            module, opts = _parse_jaas(str(value))
            if module == _OAUTH_MODULE:
                _oauth_jaas(option, opts, out)
                oauth_module = True
                continue
            if module in _JAAS_REFUSED:
                raise ConfigError(f"option {option!r}: {_JAAS_REFUSED[module]} ({module})")
            if module not in _JAAS_MODULES:
                raise ConfigError(f"option {option!r}: login module {module!r} is not supported; use "
                                  f"one of {sorted(_JAAS_MODULES)}")
            if "username" not in opts or "password" not in opts:
                raise ConfigError(f"option {option!r} needs username=\"...\" and password=\"...\"")
            jaas_user = (_JAAS_MODULES[module], opts["username"], opts["password"])
        elif name == "partitioner.class":
            if value not in _PARTITIONERS:
                raise ConfigError(f"option {option!r}: {value!r} is a Java class this client cannot run; "
                                  f"known: {sorted(_PARTITIONERS)} (or set 'kafka.partitioner' to one of "
                                  "this client's partitioner names)")
            out["partitioner"] = _PARTITIONERS[str(value)]
        elif name == "ssl.truststore.type":
            if str(value).strip().upper() != "PEM":
                raise ConfigError(f"option {option!r}={value!r} is not supported: give the CA as PEM "
                                  "(ssl.truststore.type=PEM with ssl.truststore.location or "
                                  "ssl.truststore.certificates); convert a JKS/PKCS12 truststore with "
                                  "'keytool -exportcert -rfc'")
        elif name == "ssl.truststore.location":
            path = Path(str(value))
            try:
                text = path.read_text()
            except (OSError, UnicodeDecodeError) as exc:
                raise ConfigError(
                    f"option {option!r}: cannot read {str(path)!r} as a PEM file: {exc}") from None
            out[_SSL_CADATA] = _read_pem(option, text)
        elif name == "ssl.truststore.certificates":
            out[_SSL_CADATA] = _read_pem(option, str(value))
        elif name == "ssl.endpoint.identification.algorithm":
            algo = str(value).strip().lower()
            if algo not in ("", "https"):
                raise ConfigError(f"option {option!r} must be 'https' (check the broker's host name) or '' "
                                  f"(don't), got {value!r}")
            out[_SSL_CHECK_HOSTNAME] = algo == "https"
        else:
            out[name] = value
    if oauth_module:
        mechanism = str(out.setdefault("sasl.mechanism", "OAUTHBEARER")).upper()
        if mechanism != "OAUTHBEARER":
            raise ConfigError("option 'kafka.sasl.jaas.config' holds the OAuthBearerLoginModule but "
                              f"'kafka.sasl.mechanism' is {mechanism!r}")
    if jaas_user is not None:
        kind, user, password = jaas_user
        if "sasl.mechanism" not in out and kind == "PLAIN":
            out["sasl.mechanism"] = "PLAIN"
        mechanism = str(out.get("sasl.mechanism", "")).upper()
        scram = mechanism.startswith("SCRAM-")
        if (kind == "PLAIN" and mechanism != "PLAIN") or (kind == "SCRAM" and not scram):
            raise ConfigError(f"option 'kafka.sasl.jaas.config' holds a {kind} login module but "
                              f"'kafka.sasl.mechanism' is {mechanism!r}")
        out["sasl.plain.username"] = user
        out["sasl.plain.password"] = password
    return out


_CONTEXTS: dict[tuple[str | None, bool], ssl.SSLContext] = {}


def live_settings(client: Mapping[str, Any]) -> dict[str, Any]:
    """Parsed client settings as the clients take them: TLS material becomes an ``ssl_context``."""
    if _SSL_CADATA not in client and _SSL_CHECK_HOSTNAME not in client:
        return dict(client)
    out = {k: v for k, v in client.items() if k not in (_SSL_CADATA, _SSL_CHECK_HOSTNAME)}
    key = (client.get(_SSL_CADATA), bool(client.get(_SSL_CHECK_HOSTNAME, True)))
    ctx = _CONTEXTS.get(key)
    if ctx is None:
        ctx = ssl.create_default_context(cadata=key[0]) if key[0] else ssl.create_default_context()
        if not key[1]:
            ctx.check_hostname = False
        _CONTEXTS[key] = ctx
    out["ssl_context"] = ctx
    return out
