"""Every ```python block of README.md and docs/*.md runs against the embedded broker, so the docs cannot drift
(issue 15: getting-started's snippet used to fail after the README's, producer.md's lacked imports).

Each file's blocks run in order in one fresh interpreter (tests/_docs_runner.py), README first, on one Tansu
broker, with the docs' ``127.0.0.1:9092`` replaced by the broker's address; later files read what earlier ones
wrote (docs/consumer.md reads the README's "events"), as a reader going through them would. A block that needs
what the test machine cannot give says so in a ``<!-- docs-test: skip (reason) -->`` line before it; the first
test keeps those few.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from aiokafka_lite.embedded import EmbeddedBroker

sys.path.insert(0, str(Path(__file__).parent))
from _docs_runner import blocks

#: The files build on each other (see above), so under pytest-xdist they stay together, in order, on one
#: worker and so on one broker (tests/conftest.py honours the group).
pytestmark = pytest.mark.xdist_group("docs")

ROOT = Path(__file__).resolve().parents[1]
DOC_FILES = [ROOT / "README.md", ROOT / "docs" / "getting-started.md",
             *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "getting-started.md")]
WITH_CODE = [p for p in DOC_FILES if blocks(p.read_text(encoding="utf-8"))]


def test_the_docs_have_python_blocks_and_few_are_skipped() -> None:
    found = {p.relative_to(ROOT).as_posix(): blocks(p.read_text(encoding="utf-8")) for p in WITH_CODE}
    assert "README.md" in found and "docs/getting-started.md" in found
    skipped = [(name, line, why) for name, bl in found.items() for line, _src, why in bl if why]
    total = sum(len(bl) for bl in found.values())
    assert total >= 9
    assert len(skipped) * 4 <= total, skipped


@pytest.mark.parametrize("doc", WITH_CODE, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_doc_blocks_run(doc: Path, tansu: EmbeddedBroker, tmp_path: Path) -> None:
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               SPARK_LOCAL_IP="127.0.0.1")
    runner = str(Path(__file__).parent / "_docs_runner.py")
    proc = subprocess.run([sys.executable, runner, str(doc), tansu.bootstrap], capture_output=True, text=True,
                          timeout=150, env=env, cwd=tmp_path)
    assert proc.returncode == 0, f"{doc.name}:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    assert "ran " in proc.stdout
