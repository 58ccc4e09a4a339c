"""Starting positions: the group's committed offset when there is one, else ``auto_offset_reset``.

Lookups run in one background task started by ``poll()``, so that ``poll(timeout_ms=0)`` never blocks on
them and a long poll picks the partitions up as soon as their positions are known. With
``auto_offset_reset="none"`` a partition without a committed offset (or whose position fell out of range)
stays unfetched and every ``poll()`` raises until the application seeks it.

A lookup's errors stay with their partitions (as the Java consumer's): partitions whose topic metadata knows
are looked up apart from the others, so that they deliver at once; a partition whose lookup failed (a topic
that does not exist yet fails with KafkaTimeoutError after ``request_timeout_ms``) has its error raised by
the next ``poll()``, once, and is looked up again in the background, at most every ``retry_backoff_max_ms``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .. import errors as Errors
from .._tasks import cancel_and_wait
from ..structs import TopicPartition
from . import cluster_view as cv
from .offsets import OffsetLookup, first_error
from .subscription import OffsetResetStrategy, SubscriptionState

if TYPE_CHECKING:
    from .fetcher import Fetcher
    from .membership import GroupMembership

log = logging.getLogger(__name__)


class PositionResolver:
    def __init__(self, subscription: SubscriptionState, fetcher: Fetcher, offsets: OffsetLookup,
                 coordinator: GroupMembership | None, timeout: float, retry_backoff: float = 1.0,
                 client: cv.ConsumerClient | None = None) -> None:
        self._subs = subscription
        self._client = client
        self._fetcher = fetcher
        self._offsets = offsets
        self._coordinator = coordinator
        self._timeout = timeout
        self._task: asyncio.Task[None] | None = None
        self._settled_version = -1
        self._retry_backoff = retry_backoff
        #: Partitions whose last lookup failed, with the error poll() has not raised yet.
        self._failed: dict[TopicPartition, Errors.KafkaError] = {}
        #: Partitions whose failure was raised already: not raised again until their lookup succeeds.
        self._reported: set[TopicPartition] = set()
        #: After a failed lookup, the next one waits until then (time.monotonic()).
        self._not_before = 0.0
        #: Set when a lookup finished (positions known, or an error to raise).
        self.changed = asyncio.Event()

    async def stop(self) -> None:
        task, self._task = self._task, None
        await cancel_and_wait(task, quiet=True)

    def _raise_stuck(self) -> None:
        stuck = {tp for tp in self._subs.assigned_partitions()
                 if self._subs.state(tp).reset_strategy is OffsetResetStrategy.NONE}
        for tp in list(self._fetcher.out_of_range):
            if tp not in stuck:
                del self._fetcher.out_of_range[tp]
        if not stuck:
            return
        oor = {tp: off for tp, off in self._fetcher.out_of_range.items() if tp in stuck}
        if oor:
            err = Errors.OffsetOutOfRangeError(
                f"fetch positions out of range with auto_offset_reset='none': "
                f"{ {f'{tp.topic}[{tp.partition}]': off for tp, off in sorted(oor.items())} }; seek them")
            err.offsets = oor  # type: ignore[attr-defined]
            raise err
        err2 = Errors.NoOffsetForPartitionError(
            f"no committed offset and auto_offset_reset='none' for "
            f"{sorted(f'{tp.topic}[{tp.partition}]' for tp in stuck)}; seek them")
        err2.partitions = stuck  # type: ignore[attr-defined]
        raise err2

    def settled(self) -> bool:
        """Nothing changed since poll() last found every position known (poll()'s fast path)."""
        return self._task is None and self._settled_version == self._subs.version

    def _work_pending(self) -> bool:
        return time.monotonic() >= self._not_before and self._work_exists()

    def _work_exists(self) -> bool:
        return bool(self._subs.missing_positions() or self._subs.partitions_needing_reset())

    def _raise_failed(self) -> None:
        """The failed lookups' errors, once per partition (the other partitions go on delivering)."""
        failed = {tp: e for tp, e in self._failed.items() if self._subs.is_assigned(tp)}
        self._failed = {}
        if failed:
            self._reported |= set(failed)
            raise first_error(failed)

    async def poll(self, deadline: float, wait: bool = False) -> None:
        """Start lookups that are due, collect a finished one's error, raise for stuck partitions.

        With ``wait`` it waits (until ``deadline``) for the lookup to finish.
        """
        self._collect()
        self._raise_stuck()
        self._raise_failed()
        version = self._subs.version
        if self._task is None and self._subs.has_all_positions():
            self._settled_version = version
        if self._task is None and self._work_pending():
            self.changed.clear()
            self._task = asyncio.get_running_loop().create_task(self._resolve(),
                                                                name="aiokafka_lite-positions")
        if self._task is not None and wait:
            left = deadline - time.monotonic()
            if left > 0:
                await asyncio.wait([self._task], timeout=left)
            self._collect()
            self._raise_stuck()
            self._raise_failed()
        elif wait and self._work_exists():  # the backoff after a failed lookup: the next one starts then
            await asyncio.sleep(max(0.0, min(self._not_before, deadline) - time.monotonic()))

    def _collect(self) -> None:
        task = self._task
        if task is None or not task.done():
            return
        self._task = None
        if not task.cancelled():
            exc = task.exception()
            if exc is not None:
                raise exc

    async def _resolve(self) -> None:
        try:
            missing = self._subs.missing_positions()
            if missing:
                if self._coordinator is not None:
                    committed = await self._coordinator.committer.fetch(missing, self._timeout)
                    for tp, om in committed.items():
                        st = self._subs.state_or_none(tp)
                        if st is None or st.position is not None or st.reset_strategy is not None:
                            continue
                        if om is None:
                            self._subs.request_reset(tp)
                        else:
                            self._subs.seek(tp, om.offset, om.leader_epoch)
                else:
                    for tp in missing:
                        self._subs.request_reset(tp)
            failed = await self._reset(self._subs.partitions_needing_reset().keys(), self._timeout)
            if failed:
                self._not_before = time.monotonic() + self._retry_backoff
                # A poll() waiting meanwhile wakes then and starts the next lookup.
                asyncio.get_running_loop().call_later(self._retry_backoff, self.changed.set)
                for tp, exc in failed.items():
                    if tp in self._reported:
                        log.debug("position lookup for %s failed again: %s", tp, exc)
                    else:
                        self._failed[tp] = exc
        finally:
            self.changed.set()

    async def _reset(self, partitions: Iterable[TopicPartition], timeout: float
                     ) -> dict[TopicPartition, Errors.KafkaError]:
        """Look the offsets up and apply each as it arrives; returns the failed partitions' errors.
        Partitions that metadata knows are asked apart from the rest, which may wait for their topic."""
        wanted = {tp: s for tp, s in self._subs.partitions_needing_reset().items() if tp in set(partitions)}
        if not wanted:
            return {}
        client = self._client
        known = {tp for tp in wanted if client is None or tp.partition in (cv.partitions_for(client, tp.topic)
                                                                           or ())}
        groups = [g for g in (known, set(wanted) - known) if g]
        results = await asyncio.gather(*(self._reset_group({tp: wanted[tp] for tp in g}, timeout)
                                         for g in groups))
        return {tp: e for failed in results for tp, e in failed.items()}

    async def _reset_group(self, wanted: dict[TopicPartition, OffsetResetStrategy], timeout: float
                           ) -> dict[TopicPartition, Errors.KafkaError]:
        found, failed = await self._offsets.lookup({tp: int(s) for tp, s in wanted.items()}, timeout)
        for tp, r in found.items():
            st = self._subs.state_or_none(tp)
            if st is None or st.reset_strategy is not wanted[tp]:
                continue  # sought or revoked meanwhile
            if r is None:
                log.warning("no %s offset for %s; will retry", wanted[tp].name.lower(), tp)
                continue
            self._subs.reset_done(tp, r.offset, r.leader_epoch)
            self._reported.discard(tp)
        if found:
            self.changed.set()  # a poll() waiting for positions goes on with these
        return failed

    async def reset_now(self, partitions: Iterable[TopicPartition], deadline: float) -> None:
        """seek_to_beginning / seek_to_end: look the offsets up now and wait for them; raises the first
        failed partition's error (the others are reset)."""
        failed = await self._reset(set(partitions), max(0.1, deadline - time.monotonic()))
        if failed:
            raise first_error(failed)
