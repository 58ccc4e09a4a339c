"""KIP-227 client session logic: full, then incremental with only changes; back to full on any doubt."""

from __future__ import annotations

import uuid

from aiokafka_lite.consumer.fetch_session import FINAL_EPOCH, FetchPosition, FetchSessionHandler
from aiokafka_lite.structs import TopicPartition as TP

A, B, C = TP("t", 0), TP("t", 1), TP("u", 0)


def test_full_then_incremental_then_forget() -> None:
    h = FetchSessionHandler(1)
    req = h.build({A: FetchPosition(0, 100), B: FetchPosition(5, 100)})
    assert req.is_full and req.session_id == 0 and req.epoch == 0 and set(req.to_send) == {A, B}
    assert h.handle_response(req, 0, 42, [A])
    # A advanced, B unchanged, C new: only A and C are sent.
    req = h.build({A: FetchPosition(10, 100), B: FetchPosition(5, 100), C: FetchPosition(0, 100)})
    assert (req.session_id, req.epoch) == (42, 1)
    assert set(req.to_send) == {A, C} and req.to_forget == []
    assert h.handle_response(req, 0, 42, [C])
    # B has buffered data, so it is not wanted: it is forgotten.
    req = h.build({A: FetchPosition(10, 100), C: FetchPosition(0, 100)})
    assert req.epoch == 2 and req.to_send == {} and req.to_forget == [B]
    assert h.handle_response(req, 0, 42, [])
    assert h.incremental_fetches == 2 and h.full_fetches == 1


def test_session_errors_and_surprises_fall_back_to_full() -> None:
    h = FetchSessionHandler(1)
    req = h.build({A: FetchPosition(0, 100)})
    h.handle_response(req, 0, 7, [])
    req = h.build({A: FetchPosition(1, 100)})
    assert not h.handle_response(req, 70, 0, [])  # FETCH_SESSION_ID_NOT_FOUND
    assert h.build({A: FetchPosition(1, 100)}).is_full
    h.handle_response(h.build({A: FetchPosition(1, 100)}), 0, 8, [])
    req = h.build({A: FetchPosition(2, 100)})
    assert not h.handle_response(req, 0, 8, [C])  # C is not in the session
    assert h.build({A: FetchPosition(2, 100)}).is_full
    h.handle_response(h.build({A: FetchPosition(2, 100)}), 0, 9, [])
    h.handle_error()  # connection lost
    assert h.build({A: FetchPosition(2, 100)}).is_full


def test_no_session_offered_or_disabled() -> None:
    h = FetchSessionHandler(1)
    req = h.build({A: FetchPosition(0, 100)})
    assert h.handle_response(req, 0, 0, [A])
    assert h.build({A: FetchPosition(0, 100)}).is_full
    off = FetchSessionHandler(1, enabled=False)
    req = off.build({A: FetchPosition(0, 100)})
    assert req.epoch == FINAL_EPOCH and req.session_id == 0


def test_topic_recreated_restarts_session() -> None:
    h = FetchSessionHandler(1)
    id1, id2 = uuid.uuid4(), uuid.uuid4()
    h.handle_response(h.build({A: FetchPosition(0, 100, topic_id=id1)}), 0, 5, [])
    assert h.build({A: FetchPosition(0, 100, topic_id=id2)}).is_full


def test_epoch_wraps_to_one() -> None:
    h = FetchSessionHandler(1)
    h.handle_response(h.build({A: FetchPosition(0, 1)}), 0, 5, [])
    h.epoch = 2**31 - 1
    req = h.build({A: FetchPosition(0, 1)})
    h.handle_response(req, 0, 5, [])
    assert h.epoch == 1
