"""``aiokafka.admin.records_to_delete``."""

from __future__ import annotations


class RecordsToDelete:
    """For ``delete_records``: delete every record of a partition before ``before_offset``."""

    def __init__(self, before_offset: int) -> None:
        self.before_offset = before_offset

    def __repr__(self) -> str:
        return f"RecordsToDelete(before_offset={self.before_offset})"


__all__ = ["RecordsToDelete"]
