"""Run the ```python blocks of one Markdown file, in order, in one namespace (as a reader would paste them).

Usage: ``python tests/_docs_runner.py FILE BOOTSTRAP``. Each block's ``127.0.0.1:9092`` becomes BOOTSTRAP. A
block with top-level ``await`` runs on an event loop; a block calling ``asyncio.run`` runs as it is. Spark
streaming queries a block starts are driven through whatever data is there (``processAllAvailable``) and
stopped, so a block that starts a failing query fails here. Prints ``ran N blocks`` on success.
"""

from __future__ import annotations

import ast
import asyncio
import re
import sys
from pathlib import Path
from types import CodeType
from typing import Any

DOCS_ADDRESS = "127.0.0.1:9092"
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)
#: ``<!-- docs-test: skip (reason) -->`` right before a block: the reason is printed, the block not run.
SKIP = re.compile(r"<!--\s*docs-test:\s*skip\s*\(([^)]+)\)\s*-->\s*$")


def blocks(text: str) -> list[tuple[int, str, str | None]]:
    """(line, source, skip reason) of every ```python block."""
    out = []
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        skip = SKIP.search(before)
        out.append((line, m.group(1), skip.group(1) if skip else None))
    return out


def _stop_spark_queries() -> None:
    if "pyspark" not in sys.modules:
        return
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    if spark is None:
        return
    for query in spark.streams.active:
        try:
            query.processAllAvailable()
        finally:
            query.stop()


def main(path: str, bootstrap: str) -> int:
    text = Path(path).read_text(encoding="utf-8")
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    loop = asyncio.new_event_loop()
    ran = 0
    try:
        for line, source, skip in blocks(text):
            if skip is not None:
                print(f"{path}:{line}: not run: {skip}")
                continue
            source = source.replace(DOCS_ADDRESS, bootstrap)
            code: CodeType = compile(source, f"{path}:{line}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
            result = eval(code, namespace)
            if asyncio.iscoroutine(result):
                loop.run_until_complete(result)
            _stop_spark_queries()
            ran += 1
    finally:
        loop.close()
    print(f"ran {ran} blocks")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
