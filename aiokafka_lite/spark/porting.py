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

import os
import re
import shutil
import ssl
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from ._stores import keystore_pem, store_type, truststore_pem

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
_SSL_CLIENT_CHAIN = "_ssl_client_chain"
#: The client's private key (PEM), decrypted: it travels with the pickled options, as the JAAS password does.
_SSL_CLIENT_KEY = "_ssl_client_key_secret"
_SSL_KEYS = (_SSL_CADATA, _SSL_CHECK_HOSTNAME, _SSL_CLIENT_CHAIN, _SSL_CLIENT_KEY)

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
_KRB5_MODULE = "com.sun.security.auth.module.Krb5LoginModule"
#: Krb5LoginModule options that change nothing here (Java's login thread and debugging).
_KRB5_IGNORED = {"storeKey", "doNotPrompt", "debug", "refreshKrb5Config", "isInitiator", "renewTGT"}
_PARTITIONERS = {
    "org.apache.kafka.clients.producer.internals.DefaultPartitioner": "default",
    "org.apache.kafka.clients.producer.RoundRobinPartitioner": "round_robin",
    "org.apache.kafka.clients.producer.UniformStickyPartitioner": "uniform_sticky",
}
#: Java settings with no equivalent here; refused rather than silently ignored.
_REFUSED_PREFIXES = {
    "sasl.oauthbearer.": "a broker-side or Java-class OAUTHBEARER setting (see docs/security.md for the "
                         "client's)",
    "sasl.login.": "SASL login callbacks are Java classes; give username and password in sasl.jaas.config "
                   "(or, for OAUTHBEARER, the OAuthBearerLoginModule options)",
    "sasl.client.callback.handler.class": "SASL callback handlers are Java classes",
    "ssl.engine.factory.class": "TLS engine factories are Java classes",
    "ssl.trustmanager.algorithm": "trust managers are Java's; give the CA as a PEM truststore",
    "ssl.keymanager.algorithm": "key managers are Java's",
    "ssl.provider": "security providers are Java's",
    "ssl.secure.random.implementation": "SecureRandom implementations are Java's",
    "security.providers": "security providers are Java's",
}
#: Java settings accepted and dropped: Python's ssl module negotiates the protocol itself, and the GSSAPI
#: library renews Kerberos tickets itself (no kinit thread).
_DROPPED = {"ssl.protocol", "ssl.enabled.protocols", "ssl.cipher.suites", "sasl.kerberos.kinit.cmd",
            "sasl.kerberos.ticket.renew.window.factor", "sasl.kerberos.ticket.renew.jitter",
            "sasl.kerberos.min.time.before.relogin"}
#: Java TLS store settings, gathered and read once every option is known (_stores.py).
_TRUSTSTORE = {"ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password",
               "ssl.truststore.certificates"}
_KEYSTORE = {"ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.keystore.key",
             "ssl.keystore.certificate.chain", "ssl.key.password"}

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


@dataclass
class _Ported:
    """What :func:`translate` gathers: our settings, and what is settled once every option is read."""

    out: dict[str, Any] = field(default_factory=dict)
    login: str | None = None  # "PLAIN", "SCRAM", "OAUTHBEARER" or "GSSAPI": what the JAAS line set up
    user: tuple[str, str] | None = None
    stores: dict[str, str] = field(default_factory=dict)


def _on_jaas(st: _Ported, option: str, value: str) -> None:
    module, opts = _parse_jaas(value)
    if module == _OAUTH_MODULE:
        _oauth_jaas(option, opts, st.out)
        st.login = "OAUTHBEARER"
    elif module == _KRB5_MODULE:
        _krb5_jaas(option, opts, st.out)
        st.login = "GSSAPI"
    elif module in _JAAS_MODULES:
        if "username" not in opts or "password" not in opts:
            raise ConfigError(f"option {option!r} needs username=\"...\" and password=\"...\"")
        st.login = _JAAS_MODULES[module]
        st.user = (opts["username"], opts["password"])
    else:
        raise ConfigError(f"option {option!r}: login module {module!r} is not supported; use one of "
                          f"{sorted([*_JAAS_MODULES, _OAUTH_MODULE, _KRB5_MODULE])}")


def _krb5_jaas(option: str, opts: Mapping[str, str], out: dict[str, Any]) -> None:
    """Krb5LoginModule's options (a keytab and principal, or the ticket cache) to our GSSAPI settings."""
    unknown = sorted(set(opts) - {"useKeyTab", "keyTab", "principal", "useTicketCache", "serviceName"}
                     - _KRB5_IGNORED)
    if unknown:
        raise ConfigError(f"option {option!r}: Krb5LoginModule option {unknown[0]!r} is not supported")
    if opts.get("useKeyTab", "false").lower() == "true":
        if "keyTab" not in opts:
            raise ConfigError(f"option {option!r}: useKeyTab=true needs keyTab=\"/path/to/file.keytab\"")
        out["sasl.kerberos.keytab"] = opts["keyTab"]
    elif opts.get("useTicketCache", "false").lower() != "true":
        raise ConfigError(f"option {option!r}: Krb5LoginModule needs useKeyTab=true with keyTab (or "
                          "useTicketCache=true: the credential cache of a kinit)")
    if "principal" in opts:
        out["sasl.kerberos.principal"] = opts["principal"]
    if "serviceName" in opts:
        out.setdefault("sasl.kerberos.service.name", opts["serviceName"])


def _on_partitioner(st: _Ported, option: str, value: str) -> None:
    if value not in _PARTITIONERS:
        raise ConfigError(f"option {option!r}: {value!r} is a Java class this client cannot run; known: "
                          f"{sorted(_PARTITIONERS)} (or set 'kafka.partitioner' to one of this client's "
                          "partitioner names)")
    st.out["partitioner"] = _PARTITIONERS[value]


def _on_endpoint(st: _Ported, option: str, value: str) -> None:
    algo = value.strip().lower()
    if algo not in ("", "https"):
        raise ConfigError(f"option {option!r} must be 'https' (check the broker's host name) or '' "
                          f"(don't), got {value!r}")
    st.out[_SSL_CHECK_HOSTNAME] = algo == "https"


_HANDLERS: dict[str, Callable[[_Ported, str, str], None]] = {
    "sasl.jaas.config": _on_jaas,
    "partitioner.class": _on_partitioner,
    "ssl.endpoint.identification.algorithm": _on_endpoint,
}


def _stores(st: _Ported) -> None:
    """Truststore and keystore, read once all their options are known (any order)."""
    get = st.stores.get
    if any(k.startswith("ssl.truststore.") for k in st.stores):
        option = "kafka.ssl.truststore." + ("certificates" if "ssl.truststore.certificates" in st.stores
                                            else "location")
        kind = store_type("kafka.ssl.truststore.type", get("ssl.truststore.type"),
                          get("ssl.truststore.location"))
        text = truststore_pem(option, kind, get("ssl.truststore.location"), get("ssl.truststore.password"),
                              get("ssl.truststore.certificates"))
        st.out[_SSL_CADATA] = _read_pem(option, text)
    if any(k.startswith(("ssl.keystore.", "ssl.key.")) for k in st.stores):
        option = "kafka.ssl.keystore." + ("key" if "ssl.keystore.key" in st.stores else "location")
        kind = store_type("kafka.ssl.keystore.type", get("ssl.keystore.type"), get("ssl.keystore.location"))
        chain, key = keystore_pem(option, kind, get("ssl.keystore.location"), get("ssl.keystore.password"),
                                  get("ssl.key.password"), get("ssl.keystore.key"),
                                  get("ssl.keystore.certificate.chain"))
        st.out[_SSL_CLIENT_CHAIN], st.out[_SSL_CLIENT_KEY] = chain, key


def _mechanism(st: _Ported) -> None:
    """The JAAS login module and kafka.sasl.mechanism must agree (Java's default mechanism is GSSAPI)."""
    if st.login is None:
        return
    if st.login in ("OAUTHBEARER", "GSSAPI", "PLAIN"):
        st.out.setdefault("sasl.mechanism", st.login)
    mechanism = str(st.out.get("sasl.mechanism", "")).upper()
    ok = mechanism.startswith("SCRAM-") if st.login == "SCRAM" else mechanism == st.login
    if not ok:
        module = {"OAUTHBEARER": "OAuthBearerLoginModule", "GSSAPI": "Krb5LoginModule (GSSAPI)"}.get(
            st.login, f"{st.login} login module")
        raise ConfigError(f"option 'kafka.sasl.jaas.config' holds the {module} but 'kafka.sasl.mechanism' "
                          f"is {mechanism!r}")
    if st.user is not None:
        st.out["sasl.plain.username"], st.out["sasl.plain.password"] = st.user


def translate(settings: Mapping[str, str]) -> dict[str, Any]:
    """Java-named settings (dotted, without ``kafka.``) to ours; the others pass through unchanged."""
    st = _Ported()
    for name, value in settings.items():
        option = f"kafka.{name}"
        if name == "sasl.login.callback.handler.class" and value in _OAUTH_LOGIN_HANDLERS:
            continue  # Java's way of asking for built-in token fetching: what this client does
        if (ours := _oauth_setting(name)) is not None:
            st.out[ours] = value
            continue
        refused = next((why for prefix, why in _REFUSED_PREFIXES.items() if name.startswith(prefix)), None)
        if refused is not None:
            raise ConfigError(f"option {option!r} is not supported: {refused}")
        if name in _DROPPED:
            continue
        if name in _TRUSTSTORE or name in _KEYSTORE:
            st.stores[name] = str(value)
        elif name in _HANDLERS:
            _HANDLERS[name](st, option, str(value))
        else:
            st.out[name] = value
    _stores(st)
    _mechanism(st)
    return st.out


_CONTEXTS: dict[tuple[str | None, bool, str | None, str | None], ssl.SSLContext] = {}


def live_settings(client: Mapping[str, Any]) -> dict[str, Any]:
    """Parsed client settings as the clients take them: TLS material becomes an ``ssl_context``."""
    if not any(k in client for k in _SSL_KEYS):
        return dict(client)
    out = {k: v for k, v in client.items() if k not in _SSL_KEYS}
    key = (client.get(_SSL_CADATA), bool(client.get(_SSL_CHECK_HOSTNAME, True)),
           client.get(_SSL_CLIENT_CHAIN), client.get(_SSL_CLIENT_KEY))
    ctx = _CONTEXTS.get(key)
    if ctx is None:
        ctx = ssl.create_default_context(cadata=key[0]) if key[0] else ssl.create_default_context()
        if not key[1]:
            ctx.check_hostname = False
        if key[2] and key[3]:
            _load_client_certificate(ctx, key[2], key[3])
        _CONTEXTS[key] = ctx
    out["ssl_context"] = ctx
    return out


def _load_client_certificate(ctx: ssl.SSLContext, chain: str, key: str) -> None:
    """Python's ssl loads a certificate and key only from files: a private directory, removed at once."""
    tmp = tempfile.mkdtemp(prefix="aiokafka-lite-mtls-")  # mode 0700: only this user can read inside
    try:
        cert_path, key_path = os.path.join(tmp, "chain.pem"), os.path.join(tmp, "key.pem")
        for path, text in ((cert_path, chain), (key_path, key)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(text)
        ctx.load_cert_chain(cert_path, key_path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
