"""Refuse batch-only options in ``spark.readStream...load()`` at ``load()``, as Spark's Kafka source does.

Spark's own source validates streaming options when ``load()`` asks for the schema
(``KafkaSourceProvider.sourceSchema`` -> ``validateStreamOptions``). A Python data source cannot: the
JVM asks it for its schema through ``DataSource.schema()`` without saying whether the read is a
stream (``pyspark/sql/worker/create_data_source.py`` sends only the options and a user schema), and
``streamReader()`` is first called when the query starts, where an error surfaces under PySpark's own
follow-up exceptions. So ``register(spark)`` wraps ``DataStreamReader.load`` (classic and Spark
Connect) to check the options given for our format before the DataFrame is made. The wrapper only
reads what the caller set; every other format goes through untouched.
"""

from __future__ import annotations

import functools
from typing import Any

from ..errors import ConfigError

__all__ = ["BATCH_ONLY", "check_stream_options", "install"]

#: Options only batch reads take (Spark: "ending offset not valid in streaming queries").
BATCH_ONLY = ("endingOffsets", "endingTimestamp", "endingOffsetsByTimestamp")

_MARK = "_aiokafka_lite_wrapped"


def check_stream_options(fmt: str | None, options: dict[str, Any]) -> None:
    """Raise ConfigError when ``options`` for our format hold a batch-only option."""
    from .source import FORMAT

    if fmt is None or fmt.lower() != FORMAT:
        return
    given = {str(k).lower() for k in options}
    for name in BATCH_ONLY:
        if name.lower() in given:
            raise ConfigError(f"option {name!r} is not valid in streaming queries (spark.readStream); "
                              "it only applies to batch reads (spark.read)")


def _wrap_classic(cls: Any) -> None:
    """Classic PySpark keeps format and options on the JVM side only: record them here as well."""
    if getattr(cls, _MARK, False):
        return
    orig_format, orig_option, orig_options, orig_load = cls.format, cls.option, cls.options, cls.load

    def seen(self: Any) -> dict[str, Any]:
        return self.__dict__.setdefault("_aiokafka_lite_options", {})

    @functools.wraps(orig_format)
    def format(self: Any, source: str) -> Any:
        self.__dict__["_aiokafka_lite_format"] = source
        return orig_format(self, source)

    @functools.wraps(orig_option)
    def option(self: Any, key: str, value: Any) -> Any:
        seen(self)[key] = value
        return orig_option(self, key, value)

    @functools.wraps(orig_options)
    def options(self: Any, **opts: Any) -> Any:
        seen(self).update(opts)
        return orig_options(self, **opts)

    @functools.wraps(orig_load)
    def load(self: Any, path: Any = None, format: Any = None, schema: Any = None, **opts: Any) -> Any:
        fmt = format if format is not None else self.__dict__.get("_aiokafka_lite_format")
        check_stream_options(fmt, {**seen(self), **opts})
        return orig_load(self, path, format, schema, **opts)

    cls.format, cls.option, cls.options, cls.load = format, option, options, load
    setattr(cls, _MARK, True)


def _wrap_connect(cls: Any) -> None:
    """Spark Connect's reader keeps ``_format`` and ``_options`` in Python already."""
    if getattr(cls, _MARK, False):
        return
    orig_load = cls.load

    @functools.wraps(orig_load)
    def load(self: Any, path: Any = None, format: Any = None, schema: Any = None, **opts: Any) -> Any:
        fmt = format if format is not None else getattr(self, "_format", None)
        check_stream_options(fmt, {**getattr(self, "_options", {}), **opts})
        return orig_load(self, path, format, schema, **opts)

    cls.load = load
    setattr(cls, _MARK, True)


def install() -> None:
    """Wrap the stream readers' ``load`` once per process."""
    from pyspark.sql.streaming.readwriter import DataStreamReader

    _wrap_classic(DataStreamReader)
    try:
        from pyspark.sql.connect.streaming.readwriter import DataStreamReader as ConnectReader
    except ImportError:  # Spark Connect's extra dependencies (grpcio, ...) are not installed
        return
    _wrap_connect(ConnectReader)
