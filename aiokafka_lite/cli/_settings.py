"""``-X key=value`` settings for the command line, checked against the clients' settings tables.

Settings are validated before any connection is made, so that a typo fails in milliseconds with the
same ``ConfigError`` (naming the setting, suggesting the close one) that the Python API raises.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .. import config
from ..errors import ConfigError

#: Which settings tables a command's clients use.
PRODUCER = ("producer",)
CONSUMER = ("consumer",)
SHARE_CONSUMER = ("share_consumer",)
ADMIN = ("admin",)
ROUND_TRIP = ("producer", "consumer", "admin")

#: The choices of the producing commands' -z/--compression and -a/--acks.
COMPRESSIONS = ("none", "gzip", "snappy", "lz4", "zstd")
ACKS = ("0", "1", "all", "-1")


def parse_pairs(pairs: Iterable[str] | None, *, what: str = "-X", normalize: bool = True) -> dict[str, str]:
    """``["linger.ms=5", "acks=all"]`` -> ``{"linger_ms": "5", "acks": "all"}`` (keyword spelling).

    ``normalize=False`` keeps the names as given (topic configs are sent to the broker verbatim).
    """
    out: dict[str, str] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"{what} expects key=value, got {pair!r}")
        out.update(config.dotted_to_kwargs({key: value}) if normalize else {key: value})
    return out


def split_settings(raw: Mapping[str, Any], tables: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Validate ``raw`` against the named tables; return, per table, the settings it knows.

    A setting must be known to at least one of the tables (``smoke`` passes producer settings to its
    producer and consumer settings to its consumer). Each table's share is validated in full here.
    """
    known: dict[str, set[str]] = {t: {s.name for s in config.TABLES[t]} for t in tables}
    everything = set().union(*known.values()) if known else set()
    for name in raw:
        if name not in everything:
            close = difflib.get_close_matches(name, sorted(everything), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"unknown setting {name!r}{hint}")
    out: dict[str, dict[str, Any]] = {}
    for table in tables:
        share = {k: v for k, v in raw.items() if k in known[table]}
        config.Config(config.TABLES[table], share)  # raises ConfigError naming the setting
        out[table] = share
    return out
