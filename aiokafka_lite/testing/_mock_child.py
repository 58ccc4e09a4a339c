"""Child process that owns a librdkafka mock cluster and obeys JSON-line commands.

Run as ``python _mock_child.py --lib PATH --brokers N`` (by path, so only the stdlib is imported).
librdkafka lives only here, never in the process of the client under test. Protocol: one JSON
object per line on stdin, ``{"op": NAME, "args": {...}}``; one answer per line on the original
stdout, ``{"ok": true, "result": ...}`` or ``{"ok": false, "error": "..."}``. The first answer
(unprompted) reports the bootstrap servers. EOF on stdin (the parent closed the pipe or died)
destroys the cluster and exits.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

_c_p = ctypes.c_void_p
_i16, _i32, _int, _size = ctypes.c_int16, ctypes.c_int32, ctypes.c_int, ctypes.c_size_t
_str = ctypes.c_char_p

#: (name, restype, argtypes) of every C function used; checked at load time.
_SIGNATURES: list[tuple[str, Any, list[Any]]] = [
    ("rd_kafka_conf_new", _c_p, []),
    ("rd_kafka_conf_set", _int, [_c_p, _str, _str, _str, _size]),
    ("rd_kafka_new", _c_p, [_int, _c_p, _str, _size]),
    ("rd_kafka_destroy", None, [_c_p]),
    ("rd_kafka_err2name", _str, [_int]),
    ("rd_kafka_mock_cluster_new", _c_p, [_c_p, _int]),
    ("rd_kafka_mock_cluster_destroy", None, [_c_p]),
    ("rd_kafka_mock_cluster_bootstraps", _str, [_c_p]),
    ("rd_kafka_mock_topic_create", _int, [_c_p, _str, _int, _int]),
    ("rd_kafka_mock_topic_delete", _int, [_c_p, _str]),
    ("rd_kafka_mock_topic_set_error", None, [_c_p, _str, _int]),
    ("rd_kafka_mock_partition_set_leader", _int, [_c_p, _str, _i32, _i32]),
    ("rd_kafka_mock_partition_set_follower", _int, [_c_p, _str, _i32, _i32]),
    ("rd_kafka_mock_partition_set_follower_wmarks", _int, [_c_p, _str, _i32, ctypes.c_int64, ctypes.c_int64]),
    ("rd_kafka_mock_broker_set_down", _int, [_c_p, _i32]),
    ("rd_kafka_mock_broker_set_up", _int, [_c_p, _i32]),
    ("rd_kafka_mock_broker_set_rtt", _int, [_c_p, _i32, _int]),
    ("rd_kafka_mock_broker_set_rack", _int, [_c_p, _i32, _str]),
    ("rd_kafka_mock_push_request_errors_array", None, [_c_p, _i16, _size, ctypes.POINTER(_int)]),
    # Variadic: (err, rtt_ms) int pairs follow; we always pass exactly one pair.
    ("rd_kafka_mock_broker_push_request_error_rtts", _int, [_c_p, _i32, _i16, _size]),
    ("rd_kafka_mock_broker_error_stack_cnt", _int, [_c_p, _i32, _i16, ctypes.POINTER(_size)]),
    ("rd_kafka_mock_clear_request_errors", None, [_c_p, _i16]),
    ("rd_kafka_mock_coordinator_set", _int, [_c_p, _str, _str, _i32]),
    ("rd_kafka_mock_set_apiversion", _int, [_c_p, _i16, _i16, _i16]),
    ("rd_kafka_mock_set_group_consumer_heartbeat_interval_ms", None, [_c_p, _int]),
    ("rd_kafka_mock_set_group_consumer_session_timeout_ms", None, [_c_p, _int]),
    ("rd_kafka_mock_sharegroup_set_heartbeat_interval", None, [_c_p, _int]),
    ("rd_kafka_mock_sharegroup_set_session_timeout", None, [_c_p, _int]),
    ("rd_kafka_mock_sharegroup_set_record_lock_duration", None, [_c_p, _int]),
    ("rd_kafka_mock_sharegroup_set_max_delivery_attempts", None, [_c_p, _int]),
    ("rd_kafka_mock_sharegroup_set_auto_offset_reset", None, [_c_p, _int]),
    ("rd_kafka_mock_sharegroup_get_member_ids", _int,
     [_c_p, _str, ctypes.POINTER(ctypes.POINTER(_str)), ctypes.POINTER(_size)]),
    ("rd_kafka_mock_sharegroup_target_assignment", None, [_c_p, _str, ctypes.POINTER(_str),
                                                          ctypes.POINTER(_c_p), _size]),
    ("rd_kafka_topic_partition_list_new", _c_p, [_int]),
    ("rd_kafka_topic_partition_list_add", _c_p, [_c_p, _str, _i32]),
    ("rd_kafka_topic_partition_list_destroy", None, [_c_p]),
    ("rd_kafka_mem_free", None, [_c_p, _c_p]),
    ("rd_kafka_mock_start_request_tracking", None, [_c_p]),
    ("rd_kafka_mock_stop_request_tracking", None, [_c_p]),
    ("rd_kafka_mock_clear_requests", None, [_c_p]),
    ("rd_kafka_mock_get_requests", ctypes.POINTER(_c_p), [_c_p, ctypes.POINTER(_size)]),
    ("rd_kafka_mock_request_id", _i32, [_c_p]),
    ("rd_kafka_mock_request_api_key", _i16, [_c_p]),
    ("rd_kafka_mock_request_timestamp", ctypes.c_int64, [_c_p]),
    ("rd_kafka_mock_request_destroy_array", None, [ctypes.POINTER(_c_p), _size]),
    ("rd_kafka_mock_telemetry_set_requested_metrics", _int, [_c_p, ctypes.POINTER(_str), _size]),
    ("rd_kafka_mock_telemetry_set_push_interval", _int, [_c_p, ctypes.c_int64]),
    ("rd_kafka_conf_set_log_cb", None, [_c_p, _c_p]),
]

#: librdkafka's log callback: (rk, level, facility, message).
_LOG_CB = ctypes.CFUNCTYPE(None, _c_p, _int, _str, _str)


class _Failed(Exception):
    pass


class MockClusterChild:
    """The cluster handle plus one method per protocol op."""

    def __init__(self, lib_path: str, brokers: int, debug: str = "") -> None:
        self.lib = ctypes.CDLL(lib_path)
        for name, restype, argtypes in _SIGNATURES:
            fn = getattr(self.lib, name)
            fn.restype = restype
            fn.argtypes = argtypes
        errstr = ctypes.create_string_buffer(512)
        conf = self.lib.rd_kafka_conf_new()
        # The mock decodes every PushTelemetry payload with librdkafka's own OTLP decoder and logs what
        # it read under the MOCKTELEMETRY facility (rdkafka_mock_handlers.c); keep those lines for
        # op_telemetry_log, and pass every line on to stderr as the default logger would.
        self.telemetry_lines: list[str] = []
        self._log_cb = _LOG_CB(self._on_log)
        self.lib.rd_kafka_conf_set_log_cb(conf, ctypes.cast(self._log_cb, _c_p))
        settings = [(b"client.id", b"aiokafka-lite-mock")]
        if debug:
            settings.append((b"debug", debug.encode()))
        for key, value in settings:
            if self.lib.rd_kafka_conf_set(conf, key, value, errstr, len(errstr)) != 0:
                raise _Failed(f"{key.decode()}={value.decode()!r}: {errstr.value.decode(errors='replace')}")
        self.rk = self.lib.rd_kafka_new(0, conf, errstr, len(errstr))  # 0 = RD_KAFKA_PRODUCER
        if not self.rk:
            raise _Failed(f"rd_kafka_new failed: {errstr.value.decode(errors='replace')}")
        self.mc = self.lib.rd_kafka_mock_cluster_new(self.rk, brokers)
        if not self.mc:
            raise _Failed(f"rd_kafka_mock_cluster_new({brokers}) failed")

    def _on_log(self, rk: Any, level: int, fac: bytes, buf: bytes) -> None:
        facility, text = fac.decode(errors="replace"), buf.decode(errors="replace")
        if facility == "MOCKTELEMETRY":
            self.telemetry_lines.append(text)
        sys.stderr.write(f"%{level}|{facility}| {text}\n")
        sys.stderr.flush()

    def close(self) -> None:
        self.lib.rd_kafka_mock_cluster_destroy(self.mc)
        self.lib.rd_kafka_destroy(self.rk)

    def _check(self, err: int, what: str) -> None:
        if err:
            raise _Failed(f"{what}: {self.lib.rd_kafka_err2name(err).decode()} ({err})")

    # -- ops -----------------------------------------------------------------------------------

    def op_bootstraps(self) -> str:
        return str(self.lib.rd_kafka_mock_cluster_bootstraps(self.mc).decode())

    def op_topic_create(self, topic: str, partitions: int, replication_factor: int) -> None:
        err = self.lib.rd_kafka_mock_topic_create(self.mc, topic.encode(), partitions, replication_factor)
        self._check(err, f"topic_create({topic!r})")

    def op_topic_delete(self, topic: str) -> None:
        self._check(self.lib.rd_kafka_mock_topic_delete(self.mc, topic.encode()), f"topic_delete({topic!r})")

    def op_topic_set_error(self, topic: str, error: int) -> None:
        self.lib.rd_kafka_mock_topic_set_error(self.mc, topic.encode(), error)

    def op_partition_set_leader(self, topic: str, partition: int, broker_id: int) -> None:
        err = self.lib.rd_kafka_mock_partition_set_leader(self.mc, topic.encode(), partition, broker_id)
        self._check(err, "partition_set_leader")

    def op_partition_set_follower(self, topic: str, partition: int, broker_id: int) -> None:
        err = self.lib.rd_kafka_mock_partition_set_follower(self.mc, topic.encode(), partition, broker_id)
        self._check(err, "partition_set_follower")

    def op_partition_set_follower_wmarks(self, topic: str, partition: int, lo: int, hi: int) -> None:
        err = self.lib.rd_kafka_mock_partition_set_follower_wmarks(self.mc, topic.encode(), partition, lo, hi)
        self._check(err, "partition_set_follower_wmarks")

    def op_broker_set_down(self, broker_id: int) -> None:
        self._check(self.lib.rd_kafka_mock_broker_set_down(self.mc, broker_id), "broker_set_down")

    def op_broker_set_up(self, broker_id: int) -> None:
        self._check(self.lib.rd_kafka_mock_broker_set_up(self.mc, broker_id), "broker_set_up")

    def op_broker_set_rtt(self, broker_id: int, rtt_ms: int) -> None:
        self._check(self.lib.rd_kafka_mock_broker_set_rtt(self.mc, broker_id, rtt_ms), "broker_set_rtt")

    def op_broker_set_rack(self, broker_id: int, rack: str) -> None:
        err = self.lib.rd_kafka_mock_broker_set_rack(self.mc, broker_id, rack.encode())
        self._check(err, "broker_set_rack")

    def op_push_request_errors(self, api_key: int, errors: list[int]) -> None:
        array = (_int * len(errors))(*errors)
        self.lib.rd_kafka_mock_push_request_errors_array(self.mc, api_key, len(errors), array)

    def op_broker_push_request_error_rtts(
        self, broker_id: int, api_key: int, errors: list[tuple[int, int]]
    ) -> None:
        # One pair per call: the error stack is FIFO, so this equals one call with every pair.
        for err, rtt_ms in errors:
            res = self.lib.rd_kafka_mock_broker_push_request_error_rtts(
                self.mc, broker_id, api_key, 1, _int(err), _int(rtt_ms)
            )
            self._check(res, f"broker_push_request_error_rtts(broker {broker_id})")

    def op_broker_error_stack_cnt(self, broker_id: int, api_key: int) -> int:
        cnt = _size(0)
        err = self.lib.rd_kafka_mock_broker_error_stack_cnt(self.mc, broker_id, api_key, ctypes.byref(cnt))
        self._check(err, f"broker_error_stack_cnt(broker {broker_id})")
        return int(cnt.value)

    def op_clear_request_errors(self, api_key: int) -> None:
        self.lib.rd_kafka_mock_clear_request_errors(self.mc, api_key)

    def op_coordinator_set(self, key_type: str, key: str, broker_id: int) -> None:
        err = self.lib.rd_kafka_mock_coordinator_set(self.mc, key_type.encode(), key.encode(), broker_id)
        self._check(err, "coordinator_set")

    def op_set_apiversion(self, api_key: int, min_version: int, max_version: int) -> None:
        err = self.lib.rd_kafka_mock_set_apiversion(self.mc, api_key, min_version, max_version)
        self._check(err, f"set_apiversion({api_key})")

    def op_set_group_consumer_timing(self, heartbeat_interval_ms: int, session_timeout_ms: int) -> None:
        self.lib.rd_kafka_mock_set_group_consumer_heartbeat_interval_ms(self.mc, heartbeat_interval_ms)
        self.lib.rd_kafka_mock_set_group_consumer_session_timeout_ms(self.mc, session_timeout_ms)

    def op_share_assign_all(self, group: str, topic: str, partitions: int) -> int:
        """Every member of the share group gets every partition of ``topic`` (the mock's manual target
        assignment); returns how many members there were."""
        ids = ctypes.POINTER(_str)()
        cnt = _size()
        err = self.lib.rd_kafka_mock_sharegroup_get_member_ids(self.mc, group.encode(), ctypes.byref(ids),
                                                               ctypes.byref(cnt))
        if err:
            raise RuntimeError(f"share group {group!r}: get_member_ids failed ({err})")
        n = cnt.value
        lists = (_c_p * n)()
        names = (_str * n)()
        for i in range(n):
            names[i] = ids[i]
            lst = self.lib.rd_kafka_topic_partition_list_new(partitions)
            for p in range(partitions):
                self.lib.rd_kafka_topic_partition_list_add(lst, topic.encode(), p)
            lists[i] = lst
        self.lib.rd_kafka_mock_sharegroup_target_assignment(self.mc, group.encode(), names, lists, n)
        for i in range(n):
            self.lib.rd_kafka_topic_partition_list_destroy(lists[i])
        return n

    def op_set_share_group(self, heartbeat_interval_ms: int, session_timeout_ms: int, record_lock_ms: int,
                           max_delivery_attempts: int, earliest: bool) -> None:
        self.lib.rd_kafka_mock_sharegroup_set_heartbeat_interval(self.mc, heartbeat_interval_ms)
        self.lib.rd_kafka_mock_sharegroup_set_session_timeout(self.mc, session_timeout_ms)
        self.lib.rd_kafka_mock_sharegroup_set_record_lock_duration(self.mc, record_lock_ms)
        self.lib.rd_kafka_mock_sharegroup_set_max_delivery_attempts(self.mc, max_delivery_attempts)
        self.lib.rd_kafka_mock_sharegroup_set_auto_offset_reset(self.mc, 1 if earliest else 0)

    def op_start_request_tracking(self) -> None:
        self.lib.rd_kafka_mock_start_request_tracking(self.mc)

    def op_stop_request_tracking(self) -> None:
        self.lib.rd_kafka_mock_stop_request_tracking(self.mc)

    def op_clear_requests(self) -> None:
        self.lib.rd_kafka_mock_clear_requests(self.mc)

    def op_get_requests(self) -> list[tuple[int, int, int]]:
        cnt = _size(0)
        reqs = self.lib.rd_kafka_mock_get_requests(self.mc, ctypes.byref(cnt))
        if not reqs:
            return []
        out = [
            (
                int(self.lib.rd_kafka_mock_request_id(reqs[i])),
                int(self.lib.rd_kafka_mock_request_api_key(reqs[i])),
                int(self.lib.rd_kafka_mock_request_timestamp(reqs[i])),
            )
            for i in range(cnt.value)
        ]
        self.lib.rd_kafka_mock_request_destroy_array(reqs, cnt.value)
        return out


    def op_telemetry_set_requested_metrics(self, metrics: list[str]) -> None:
        array = (_str * len(metrics))(*(m.encode() for m in metrics))
        err = self.lib.rd_kafka_mock_telemetry_set_requested_metrics(self.mc, array, len(metrics))
        self._check(err, "telemetry_set_requested_metrics")

    def op_telemetry_set_push_interval(self, push_interval_ms: int) -> None:
        err = self.lib.rd_kafka_mock_telemetry_set_push_interval(self.mc, push_interval_ms)
        self._check(err, "telemetry_set_push_interval")

    def op_telemetry_log(self) -> list[str]:
        lines, self.telemetry_lines = self.telemetry_lines, []
        return lines


def _reply(out: TextIO, ok: bool, value: Any) -> None:
    out.write(json.dumps({"ok": True, "result": value} if ok else {"ok": False, "error": value}) + "\n")
    out.flush()


def log(line: str) -> None:
    """A line for the log file (stderr), so a failed test shows what was done to the cluster."""
    sys.stderr.write(f"{time.strftime('%H:%M:%S')} [mock] {line}\n")
    sys.stderr.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", required=True)
    parser.add_argument("--brokers", type=int, required=True)
    parser.add_argument("--debug", default="")
    ns = parser.parse_args(argv)
    # Keep the control channel clean: anything else writing to fd 1 (C code included) goes to stderr.
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        child = MockClusterChild(ns.lib, ns.brokers, ns.debug)
    except _Failed as exc:
        _reply(out, False, f"cannot create the mock cluster: {exc}")
        return 1
    except (OSError, AttributeError) as exc:  # library missing, or built without the mock API
        _reply(out, False, f"cannot load {ns.lib}: {exc.__class__.__name__}: {exc}")
        return 1
    try:
        bootstraps = child.op_bootstraps()
        log(f"mock cluster pid {os.getpid()}: {ns.brokers} brokers at {bootstraps}")
        _reply(out, True, {"bootstraps": bootstraps, "pid": os.getpid()})
        for line in sys.stdin:
            if not line.strip():
                continue
            op = "?"
            try:
                msg = json.loads(line)
                op = msg["op"]
                if op == "exit":
                    _reply(out, True, None)
                    break
                log(f"op {op} {msg.get('args', {})}")
                fn: Callable[..., Any] = getattr(child, f"op_{op}")
                _reply(out, True, fn(**msg.get("args", {})))
            except _Failed as exc:
                log(f"  failed: {exc}")
                _reply(out, False, str(exc))
            except (KeyError, TypeError, ValueError, AttributeError, ctypes.ArgumentError) as exc:
                _reply(out, False, f"{op}: bad request: {exc.__class__.__name__}: {exc}")
    finally:
        child.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
