"""failOnDataLoss: what to do when offsets a query expects are gone from Kafka.

Data can vanish under a running query: retention or DeleteRecords move a partition's log start past
the query's position, a topic is deleted or recreated, an unclean leader election truncates a log. With
``failOnDataLoss=true`` (the default, as in Spark) the query fails with :class:`DataLossError`; with
``false`` the reader logs a warning and carries on from what is still there.
"""

from __future__ import annotations

import logging

from ..errors import KafkaError

__all__ = ["DataLossError", "report_data_loss"]

log = logging.getLogger("aiokafka_lite.spark")

_ADVICE = (" Some data may have been lost because it is no longer available in Kafka (retention, "
           "deleted records or topics). If you want the query to carry on, set the source option "
           "failOnDataLoss to false.")


class DataLossError(KafkaError):
    """Offsets the query needs are no longer in Kafka, and failOnDataLoss is true."""


def report_data_loss(fail: bool, message: str) -> None:
    """Raise :class:`DataLossError` when ``fail``; otherwise log a warning and return."""
    if fail:
        raise DataLossError(message + _ADVICE)
    log.warning("%s (failOnDataLoss=false: continuing)", message)
