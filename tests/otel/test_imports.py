"""The [otel] extra is optional: plain clients never import opentelemetry, and aiokafka_lite.otel needs only
the API (the SDK is the application's)."""

from __future__ import annotations

import subprocess
import sys


def _run(code: str) -> None:
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_plain_clients_import_no_opentelemetry() -> None:
    _run("import sys, aiokafka_lite\n"
         "from aiokafka_lite import Consumer, Producer\n"
         "assert Producer()._otel is None and Consumer()._otel is None\n"
         "loaded = [m for m in sys.modules if m.startswith('opentelemetry')]\n"
         "assert not loaded, loaded\n")


def test_otel_package_needs_only_the_api() -> None:
    _run("import sys\n"
         "from aiokafka_lite.otel import KafkaInstrumentor\n"
         "KafkaInstrumentor().instrument()\n"
         "from aiokafka_lite import Producer\n"
         "assert Producer()._otel is not None\n"
         "loaded = [m for m in sys.modules if m.startswith('opentelemetry.sdk')]\n"
         "assert not loaded, loaded\n")
