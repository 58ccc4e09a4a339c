"""A user's script with setting mistakes that mypy --strict must report, one per marked line."""

from __future__ import annotations

from aiokafka_lite import Admin, Consumer, Producer


def build() -> None:
    Producer(linger_msx=5)  # E: linger_msx
    Producer(acks="2")  # E: acks
    Producer(linger_ms="5")  # E: linger_ms
    Consumer("t", auto_offset_reset="earliset")  # E: auto_offset_reset
    Consumer("t", enable_auto_commit="yes")  # E: enable_auto_commit
    Admin(request_timeout="5s")  # E: request_timeout


async def records() -> None:
    plain = Consumer("t")
    rec = await plain.getone()
    text: str = rec.value  # E: assignment
    decoded = Consumer("t", value_deserializer=lambda b: b.decode())
    rec2 = await decoded.getone()
    raw: bytes = rec2.value  # E: assignment
    print(text, raw)
