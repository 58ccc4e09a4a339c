"""Settings: one declarative table per client, validated once, documented from the same table.

Every client takes keyword arguments named after Kafka's settings with ``_`` for ``.`` and has
``from_config(dict)`` for the dotted names. Validation happens here, at construction, so that a wrong
value fails fast with a :class:`ConfigError` that names the setting instead of misbehaving later.
``tools/gen_config_docs.py`` renders these tables into ``docs/configuration.md``.
"""

from __future__ import annotations

import dataclasses
import ssl
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import ConfigError

_MISSING: Any = object()


@dataclass(frozen=True)
class Setting:
    """One setting: its Python name, accepted types, default, bounds and a line of documentation."""

    name: str
    types: tuple[type, ...]
    default: Any
    doc: str
    choices: tuple[Any, ...] | None = None
    min: float | None = None
    max: float | None = None
    nullable: bool = False
    convert: Callable[[Any], Any] | None = None
    #: A secret (a password): never shown in errors, repr or as_dict().
    secret: bool = False

    @property
    def kafka_name(self) -> str:
        return self.name.replace("_", ".")

    def validate(self, value: Any) -> Any:
        if value is None:
            if self.nullable:
                return None
            raise ConfigError(f"setting {self.name!r} may not be None")
        if self.convert is not None:
            try:
                value = self.convert(value)
            except ConfigError:
                raise
            except (TypeError, ValueError) as exc:
                raise ConfigError(f"setting {self.name!r}: {'a value it cannot take' if self.secret else exc}"
                                  ) from None
        if self.types and not isinstance(value, self.types):
            # bool is an int subclass; a bool where a number is wanted is a mistake.
            raise ConfigError(f"setting {self.name!r} must be {self._type_names()}, "
                              f"got {type(value).__name__} {self.show(value)}")
        if isinstance(value, bool) and bool not in self.types:
            raise ConfigError(
                f"setting {self.name!r} must be {self._type_names()}, got bool {self.show(value)}")
        if self.choices is not None and value not in self.choices:
            raise ConfigError(
                f"setting {self.name!r} must be one of {list(self.choices)!r}, got {self.show(value)}")
        if self.min is not None and isinstance(value, (int, float)) and value < self.min:
            raise ConfigError(f"setting {self.name!r} must be >= {self.min}, got {self.show(value)}")
        if self.max is not None and isinstance(value, (int, float)) and value > self.max:
            raise ConfigError(f"setting {self.name!r} must be <= {self.max}, got {self.show(value)}")
        return value

    def show(self, value: Any) -> str:
        """``value`` as errors and logs may show it: a secret never appears."""
        return "'***'" if self.secret else repr(value)

    def _type_names(self) -> str:
        return " or ".join(t.__name__ for t in self.types)


def _int_like(value: Any) -> Any:
    """Accept numeric strings (from -X key=value or dotted configs) for int settings."""
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            raise ValueError(f"not an integer: {value!r}") from None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _bool_like(value: Any) -> Any:
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ("true", "1", "yes", "on"):
            return True
        if low in ("false", "0", "no", "off"):
            return False
        raise ValueError(f"not a boolean: {value!r}")
    return value


def _servers(value: Any) -> Any:
    """bootstrap_servers: "h1:p1,h2:p2" or a list of "host:port" strings -> list of (host, port)."""
    items: Iterable[Any]
    if isinstance(value, str):
        items = [s for s in value.split(",") if s.strip()]
    elif isinstance(value, (list, tuple)):
        items = value
    else:
        raise ValueError(f"expected 'host:port[,host:port]' or a list, got {type(value).__name__}")
    out: list[tuple[str, int]] = []
    for item in items:
        if isinstance(item, tuple) and len(item) == 2:
            host, port = item
        else:
            text = str(item).strip()
            if "://" in text:
                text = text.split("://", 1)[1]
            if text.startswith("["):  # [::1]:9092
                host, _, port_text = text[1:].partition("]:")
            else:
                host, sep, port_text = text.rpartition(":")
                if not sep:
                    host, port_text = text, "9092"
            try:
                port = int(port_text)
            except ValueError:
                raise ValueError(f"bad port in {item!r}") from None
        if not host or not 0 < int(port) < 65536:
            raise ValueError(f"bad address {item!r}")
        out.append((str(host), int(port)))
    if not out:
        raise ValueError("no servers given")
    return out


def _acks(value: Any) -> Any:
    if value in ("all", -1, "-1"):
        return -1
    if value in (0, 1, "0", "1"):
        return int(value)
    raise ValueError(f"acks must be 0, 1 or 'all', got {value!r}")


def _compression(value: Any) -> Any:
    if value is None or value == "none":
        return None
    return value


def _strategies(value: Any) -> Any:
    if isinstance(value, str):
        return tuple(s.strip() for s in value.split(",") if s.strip())
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return (value,)


def _debug_contexts(value: Any) -> Any:
    from ._debug import parse

    return parse(value)


def _S(name: str, types: type | tuple[type, ...], default: Any, doc: str, **kw: Any) -> Setting:
    t = types if isinstance(types, tuple) else (types,)
    if "convert" not in kw:
        if t == (int,):
            kw["convert"] = _int_like
        elif t == (bool,):
            kw["convert"] = _bool_like
    return Setting(name, t, default, doc, **kw)


_ANY = (object,)

# SASL/OAUTHBEARER (KIP-255): a token callback, or fetching from a token endpoint with the client
# credentials (KIP-768) or jwt-bearer (KIP-1139) grant. See docs/security.md.
OAUTH: tuple[Setting, ...] = (
    _S("sasl_oauth_token_provider", _ANY, None,
       "OAUTHBEARER token source: a callable (sync or async) returning an OAuthBearerToken or "
       "(token, lifetime_seconds), or an object with an async token() (aiokafka's AbstractTokenProvider). "
       "Hidden from repr like a secret: it may hold credentials.", nullable=True, secret=True),
    _S("sasl_oauthbearer_token_endpoint_url", str, None,
       "OAUTHBEARER: the OAuth token endpoint (https://...) to fetch tokens from, or file:///path of a JWT. "
       "Hidden from repr (a URL may carry credentials); errors about the endpoint name it.",
       nullable=True, secret=True),
    _S("sasl_oauthbearer_client_id", str, None, "OAUTHBEARER client_credentials grant: the client id.",
       nullable=True),
    _S("sasl_oauthbearer_client_secret", str, None,
       "OAUTHBEARER client_credentials grant: the client secret.", nullable=True, secret=True),
    _S("sasl_oauthbearer_header_urlencode", bool, False,
       "OAUTHBEARER client_credentials: form-encode the client id and secret in the HTTP Basic header "
       "(RFC 6749 2.3.1); off by default, as in Java (KIP-1025)."),
    _S("sasl_oauthbearer_scope", str, None, "OAUTHBEARER: the scope to ask the token endpoint for.",
       nullable=True),
    _S("sasl_oauthbearer_extensions", _ANY, None,
       "OAUTHBEARER: SASL extensions sent with the token, a dict or 'key=value,key=value'.", nullable=True),
    _S("sasl_oauthbearer_ssl_context", ssl.SSLContext, None,
       "TLS context for an https token endpoint (default: the system's trust store).", nullable=True),
    _S("sasl_oauthbearer_assertion_file", str, None,
       "OAUTHBEARER jwt-bearer grant: a file holding the client assertion (re-read at every fetch).",
       nullable=True),
    _S("sasl_oauthbearer_assertion_private_key_file", str, None,
       "OAUTHBEARER jwt-bearer grant: PEM private key that signs a fresh client assertion (needs the "
       "'oauth' extra).", nullable=True),
    _S("sasl_oauthbearer_assertion_private_key_passphrase", str, None,
       "Passphrase of the assertion private key.", nullable=True, secret=True),
    _S("sasl_oauthbearer_assertion_algorithm", str, "RS256", "Assertion signature algorithm.",
       choices=("RS256", "ES256")),
    _S("sasl_oauthbearer_assertion_claim_iss", str, None, "Assertion 'iss' claim.", nullable=True),
    _S("sasl_oauthbearer_assertion_claim_sub", str, None, "Assertion 'sub' claim.", nullable=True),
    _S("sasl_oauthbearer_assertion_claim_aud", str, None, "Assertion 'aud' claim.", nullable=True),
    _S("sasl_oauthbearer_assertion_claim_exp_seconds", int, 300, "Assertion lifetime ('exp' - 'iat').",
       min=1),
    _S("sasl_oauthbearer_assertion_claim_nbf_seconds", int, 60, "Assertion 'nbf' this long before 'iat'.",
       min=0),
    _S("sasl_oauthbearer_assertion_claim_jti_include", bool, False, "Add a random 'jti' claim."),
    _S("sasl_oauthbearer_assertion_template_file", str, None,
       "JSON file of extra assertion claims ({'payload': {...}}).", nullable=True),
    _S("sasl_login_connect_timeout_ms", int, 10000, "OAUTHBEARER: connect timeout to the token endpoint.",
       min=1),
    _S("sasl_login_read_timeout_ms", int, 10000,
       "OAUTHBEARER: how long the token endpoint may take to answer.", min=1),
)

COMMON: tuple[Setting, ...] = (
    _S("bootstrap_servers", list, "127.0.0.1:9092",
       "Brokers to bootstrap from: 'host:port,host:port' or a list; each is tried in turn.",
       convert=_servers),
    _S("client_id", str, "aiokafka-lite", "Sent with every request; shows up in broker logs and quotas."),
    _S("request_timeout_ms", int, 30000,
       "How long a request may wait for its response; on expiry the connection is closed "
       "and every request in flight on it fails.", min=1),
    _S("metadata_max_age_ms", int, 300000, "Refresh cluster metadata at least this often.", min=0),
    _S("metadata_recovery_strategy", str, "rebootstrap",
       "What to do when no known broker can give metadata (KIP-899): 'rebootstrap' resolves the "
       "bootstrap_servers names again and carries on with the cluster found there; 'none' keeps "
       "trying the brokers already known.", choices=("rebootstrap", "none")),
    _S("metadata_recovery_rebootstrap_trigger_ms", int, 300000,
       "With rebootstrap: rebootstrap when no metadata update has succeeded for this long, even "
       "though some known broker still accepts connections (KIP-1102).", min=0),
    _S("connections_max_idle_ms", int, 540000, "Close a connection idle for this long.", min=1),
    _S("reconnect_backoff_ms", int, 50, "First wait before reconnecting to a broker.", min=0),
    _S("reconnect_backoff_max_ms", int, 1000, "The reconnect wait doubles up to this.", min=0),
    _S("retry_backoff_ms", int, 100, "First wait before retrying a failed request.", min=0),
    _S("retry_backoff_max_ms", int, 1000,
       "The retry wait doubles per attempt up to this, with +-20% jitter (KIP-580).", min=0),
    _S("socket_connection_setup_timeout_ms", int, 10000, "Connect (TCP, TLS, SASL) timeout.", min=1),
    _S("send_buffer_bytes", int, -1,
       "SO_SNDBUF; -1 (the default, as librdkafka's) keeps the OS's, which Linux grows with the "
       "connection's throughput. Java's 128 KiB cost our producer ~10 % of its records/s at 16 KiB "
       "values.", min=-1),
    _S("receive_buffer_bytes", int, -1,
       "SO_RCVBUF; -1 (the default, as librdkafka's) keeps the OS's, which Linux grows with the "
       "connection's throughput. The Java consumer's 64 KiB (its producer's: 32 KiB) made a consumer "
       "wake for every ~110 KiB and cost it ~30 % more CPU per record at 16 KiB values.", min=-1),
    _S("max_in_flight_requests_per_connection", int, 5,
       "Requests pipelined on one connection before the next waits.", min=1),
    _S("receive_message_max_bytes", int, 100 * 1024 * 1024,
       "Largest response frame accepted; a larger length prefix closes the connection.", min=1024),
    _S("api_version", str, "auto", "'auto' negotiates with ApiVersions; nothing else is supported yet.",
       choices=("auto",)),
    _S("security_protocol", str, "PLAINTEXT", "How to reach brokers.",
       choices=("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")),
    _S("ssl_context", ssl.SSLContext, None,
       "A ready TLS context for SSL and SASL_SSL; excludes the other ssl_* settings.", nullable=True),
    _S("ssl_cafile", str, None,
       "PEM file of the CA certificates that sign the brokers' (None, and no ssl_cadata: the system's).",
       nullable=True),
    _S("ssl_cadata", str, None, "PEM text of CA certificates, instead of or beside ssl_cafile.",
       nullable=True),
    _S("ssl_certfile", str, None, "PEM file of the client certificate (chain) for mutual TLS.",
       nullable=True),
    _S("ssl_keyfile", str, None, "PEM file of the client certificate's private key (None: in ssl_certfile).",
       nullable=True),
    _S("ssl_password", str, None, "Password of an encrypted ssl_keyfile.", nullable=True, secret=True),
    _S("ssl_endpoint_identification_algorithm", str, "https",
       "'https' checks each broker's host name against its certificate; '' turns that off (logged).",
       choices=("https", "")),
    _S("sasl_mechanism", str, "PLAIN", "SASL mechanism.",
       choices=("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "GSSAPI", "OAUTHBEARER")),
    _S("sasl_plain_username", str, None, "SASL user name (PLAIN and SCRAM).", nullable=True),
    _S("sasl_plain_password", str, None, "SASL password (PLAIN and SCRAM).", nullable=True, secret=True),
    *OAUTH,
    _S("sasl_kerberos_service_name", str, "kafka",
       "GSSAPI: the brokers' Kerberos service name (the principal is service/host@REALM)."),
    _S("sasl_kerberos_domain_name", str, None,
       "GSSAPI: the host part of the brokers' principal, instead of each broker's own host name.",
       nullable=True),
    _S("sasl_kerberos_keytab", str, None,
       "GSSAPI: a keytab to log in from (None: the default credential cache, e.g. after kinit).",
       nullable=True),
    _S("sasl_kerberos_principal", str, None,
       "GSSAPI: the client's principal (user@REALM); None: the keytab's or the cache's.", nullable=True),
    _S("enable_metrics_push", bool, True,
       "Push client metrics to a broker that subscribes to them (KIP-714); a broker without the API "
       "costs nothing."),
    _S("metrics_sample_window_ms", int, 30000,
       "Window of one metrics sample; rates and averages cover metrics_num_samples of them (Java's rule).",
       min=1),
    _S("metrics_num_samples", int, 2, "Samples kept per windowed metric.", min=1),
    _S("debug", str, None,
       "Debug logging by context, as librdkafka's: a comma-separated list of protocol, broker, msg, fetch, "
       "cgrp, eos, or 'all'. Each writes request/response summaries (API, version, correlation id, broker, "
       "latency, error codes; never payloads or secrets) to the logger aiokafka_lite.debug.<context> at "
       "DEBUG, and turns that logger on. See docs/observability.md.", nullable=True, convert=_debug_contexts),
    _S("tracer_provider", _ANY, None,
       "An OpenTelemetry TracerProvider: trace this client with it (needs the [otel] extra; "
       "aiokafka_lite.otel.KafkaInstrumentor instruments every client). See docs/observability.md.",
       nullable=True),
    _S("meter_provider", _ANY, None,
       "An OpenTelemetry MeterProvider: record this client's messaging metrics with it (needs the [otel] "
       "extra).", nullable=True),
)

PRODUCER: tuple[Setting, ...] = (
    *COMMON,
    _S("acks", int, -1, "0: no ack; 1: the leader's; 'all' (-1): every in-sync replica's.", convert=_acks),
    _S("batch_size", int, 16384, "Bytes per partition batch before it is sent without waiting for linger.",
       min=1),
    _S("max_batch_bytes", int, 1_000_000,
       "A full batch that cannot go yet (another of its partition is ahead, queued or in flight: with "
       "idempotence one batch per partition is in flight) grows past batch_size up to this (and "
       "max_request_size), so a backlog on a far link takes few round trips. 0 keeps batches at "
       "batch_size.", min=0),
    _S("linger_ms", int, 5, "How long a batch waits for more records (longer while its partition's "
       "previous batch is in flight: it goes with that answer).", min=0),
    _S("buffer_memory", int, 32 * 1024 * 1024, "Bytes of unsent records held; send() waits when full.",
       min=1024),
    _S("max_block_ms", int, 60000, "How long send() waits for metadata or buffer space.", min=0),
    _S("max_request_size", int, 1048576, "Largest produce request (and record) sent.", min=1),
    _S("compression_type", str, None, "Batch codec.", nullable=True,
       choices=("gzip", "snappy", "lz4", "zstd"), convert=_compression),
    _S("enable_idempotence", bool, True,
       "Sequence numbers: no duplicates; order kept whatever the broker checks (one batch per partition "
       "in flight; see docs/producer.md)."),
    _S("retries", int, 2147483647, "Retries of a failed batch within delivery_timeout_ms.", min=0),
    _S("delivery_timeout_ms", int, 120000, "Upper bound from send() to success or failure.", min=1),
    _S("partitioner", _ANY, "default",
       "'default' (murmur2 for keys, uniform sticky otherwise), librdkafka's names ('murmur2', "
       "'murmur2_random', 'consistent', 'consistent_random', 'fnv1a', 'fnv1a_random'), 'crc32', 'murmur3', "
       "'uniform_sticky', 'round_robin', or a callable(key_bytes, all_partitions, available); "
       "see docs/producer.md."),
    _S("key_serializer", _ANY, None, "callable(key) -> bytes.", nullable=True),
    _S("value_serializer", _ANY, None, "callable(value) -> bytes.", nullable=True),
    _S("interceptors", (list, tuple), (), "Objects with on_send(record) and on_acknowledgement(md, exc)."),
    _S("transactional_id", str, None, "Enables transactions; stable across restarts to fence zombies.",
       nullable=True),
    _S("transaction_timeout_ms", int, 60000, "Broker aborts a transaction open this long.", min=1),
    _S("partitioner_ignore_keys", bool, False, "Use sticky partitioning even for keyed records."),
    _S("allow_auto_create_topics", bool, True,
       "Let Metadata requests create a missing topic (if the broker allows it); False makes send() to an "
       "unknown topic wait max_block_ms and raise KafkaTimeoutError naming it."),
)

CONSUMER: tuple[Setting, ...] = (
    *COMMON,
    _S("group_id", str, None, "Consumer group; None consumes without a group (assign() only).",
       nullable=True),
    _S("group_instance_id", str, None, "Static membership id (KIP-345).", nullable=True),
    _S("group_protocol", str, "classic", "Group membership protocol: 'classic' (JoinGroup/SyncGroup, the "
       "leader member assigns) or 'consumer' (KIP-848: the broker assigns and moves partitions "
       "incrementally; needs a Kafka 4.0+ coordinator).", choices=("classic", "consumer")),
    _S("group_remote_assignor", str, None, "group_protocol='consumer' only: the broker-side assignor, "
       "'uniform' or 'range'; None lets the broker use its default.", nullable=True,
       choices=("uniform", "range")),
    _S("client_rack", str, None, "Rack of this consumer (broker.rack of the brokers near it); sent in the "
       "JoinGroup subscription so that the range and sticky assignors prefer partitions with a replica in "
       "this rack (KIP-881), and in every Fetch so that the leader can name a replica in this rack to "
       "fetch from (KIP-392).", nullable=True),
    _S("auto_offset_reset", str, "latest", "Where to start without a committed offset.",
       choices=("earliest", "latest", "none")),
    _S("enable_auto_commit", bool, True, "Commit positions every auto_commit_interval_ms."),
    _S("auto_commit_interval_ms", int, 5000, "Auto-commit period.", min=1),
    _S("max_poll_records", int, 500, "Most records one poll() returns.", min=1),
    _S("max_poll_interval_ms", int, 300000, "Leave the group if poll() is not called for this long.", min=1),
    _S("session_timeout_ms", int, 45000, "Group session timeout.", min=1),
    _S("heartbeat_interval_ms", int, 3000, "Heartbeat period.", min=1),
    _S("rebalance_timeout_ms", int, None, "JoinGroup rebalance timeout; defaults to max_poll_interval_ms.",
       nullable=True, min=1),
    _S("fetch_min_bytes", int, 1, "Broker waits for this much data.", min=0),
    _S("fetch_max_bytes", int, 52428800, "Most data in one fetch response.", min=1),
    _S("fetch_max_wait_ms", int, 500, "Broker waits at most this for fetch_min_bytes.", min=0),
    _S("max_partition_fetch_bytes", int, 1048576, "Most data per partition per fetch.", min=1),
    _S("isolation_level", str, "read_uncommitted", "read_committed hides aborted transactional records.",
       choices=("read_uncommitted", "read_committed")),
    _S("partition_assignment_strategy", tuple, ("range", "roundrobin", "cooperative-sticky"),
       "Assignors in preference order: range, roundrobin, sticky, cooperative-sticky. The default shares "
       "one with each peer's default (Java: range; librdkafka: range; aiokafka: roundrobin), so mixed "
       "groups form; it rebalances eagerly.",
       convert=_strategies),
    _S("key_deserializer", _ANY, None, "callable(bytes) -> key.", nullable=True),
    _S("value_deserializer", _ANY, None, "callable(bytes) -> value.", nullable=True),
    _S("check_crcs", bool, True, "Verify each batch's CRC32C."),
    _S("exclude_internal_topics", bool, True, "Pattern subscriptions skip internal topics."),
    _S("allow_auto_create_topics", bool, True,
       "Let the Metadata requests for subscribed or assigned topics create a missing one (if the broker "
       "allows it), as Java's allow.auto.create.topics (default true) and aiokafka do; False leaves it "
       "missing (the subscription waits for it, an assigned partition's position lookup fails)."),
)

_CONSUMER_BY_NAME = {s.name: s for s in CONSUMER}

#: The share consumer (KIP-932): a share group hands out records, not partitions, so the settings of
#: positions, offsets commits and group sessions do not apply.
SHARE_CONSUMER: tuple[Setting, ...] = (
    *COMMON,
    _S("group_id", str, None, "The share group (required).", nullable=True),
    _S("acknowledgement_mode", str, "implicit",
       "Kafka's share.acknowledgement.mode. 'implicit': every record a poll() hands out is accepted at the "
       "next poll() or commit(); 'explicit': the application acknowledges each record (accept, release or "
       "reject) before the next poll().", choices=("implicit", "explicit")),
    *(_CONSUMER_BY_NAME[n] for n in ("client_rack", "max_poll_records", "fetch_min_bytes", "fetch_max_bytes",
                                     "fetch_max_wait_ms", "key_deserializer", "value_deserializer",
                                     "check_crcs")),
)

#: As Java's AdminClient, the admin client pushes no telemetry unless asked to.
ADMIN: tuple[Setting, ...] = tuple(
    dataclasses.replace(s, default=False) if s.name == "enable_metrics_push" else s for s in COMMON)

TABLES: dict[str, tuple[Setting, ...]] = {"common": COMMON, "producer": PRODUCER, "consumer": CONSUMER,
                                           "share_consumer": SHARE_CONSUMER, "admin": ADMIN}


def dotted_to_kwargs(config: Mapping[str, Any]) -> dict[str, Any]:
    """Kafka's dotted names ({"linger.ms": 5}) to keyword names ({"linger_ms": 5})."""
    return {str(k).replace(".", "_").replace("-", "_"): v for k, v in config.items()}


class Config:
    """Validated settings of one client; attributes are the settings' Python names."""

    __slots__ = ("_table", "_values")

    def __init__(self, table: Iterable[Setting], values: Mapping[str, Any]) -> None:
        index = {s.name: s for s in table}
        resolved: dict[str, Any] = {}
        unknown = [k for k in values if k not in index]
        if unknown:
            raise ConfigError(f"unknown setting {unknown[0]!r}" + _suggest(unknown[0], index))
        for name, setting in index.items():
            value = values.get(name, _MISSING)
            if value is _MISSING:
                value = setting.default
                if value is not None:
                    value = setting.validate(value)
            else:
                value = setting.validate(value)
            resolved[name] = value
        object.__setattr__(self, "_values", resolved)
        object.__setattr__(self, "_table", index)

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Config is read-only")

    def as_dict(self) -> dict[str, Any]:
        """The settings by name; secrets (passwords) show as ``'***'``."""
        return {k: ("***" if self._table[k].secret and v is not None else v) for k, v in self._values.items()}

    def replace(self, **changes: Any) -> Config:
        values = dict(self._values)
        values.update(changes)
        return Config(self._table.values(), values)

    def __repr__(self) -> str:
        return f"Config({self.as_dict()!r})"


def _suggest(name: str, index: Mapping[str, Setting]) -> str:
    import difflib

    close = difflib.get_close_matches(name, list(index), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
