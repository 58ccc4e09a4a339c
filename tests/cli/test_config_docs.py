"""docs/configuration.md is generated from aiokafka_lite.config; the committed page must be current."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _generator() -> object:
    spec = importlib.util.spec_from_file_location("gen_config_docs", ROOT / "tools" / "gen_config_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_configuration_page_is_up_to_date() -> None:
    rendered = _generator().render()  # type: ignore[attr-defined]
    committed = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert committed == rendered, "docs/configuration.md is stale: run `make docs`"


def test_every_setting_is_documented() -> None:
    from aiokafka_lite import config

    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    for table in config.TABLES.values():
        for setting in table:
            assert f"| `{setting.name}` | `{setting.kafka_name}` |" in page
