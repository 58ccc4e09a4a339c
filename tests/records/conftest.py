"""Fixtures for the records tests."""

from __future__ import annotations

from types import ModuleType

import pytest
from _records_helpers import IMPLS


@pytest.fixture(params=sorted(IMPLS))
def impl(request: pytest.FixtureRequest) -> ModuleType:
    """Each test that takes ``impl`` runs against the compiled core and the pure twin."""
    return IMPLS[request.param]
