"""Which world the fake's clients talk to (`testing/active.py`): the innermost active `mock_servicebus()`."""

from __future__ import annotations

import pytest

from pairedbus.testing import ServiceBusWorld, active_world, aio_client, mock_servicebus
from pairedbus.testing.active import pop, push

from . import early_import
from .test_patching import REAL_AIO_CLIENT


def test_nested_fakes_use_the_innermost_world() -> None:
    with mock_servicebus() as outer:
        with mock_servicebus() as inner:
            assert active_world() is inner
        assert active_world() is outer
        assert early_import.ServiceBusClient is aio_client.ServiceBusClient
    assert early_import.ServiceBusClient is REAL_AIO_CLIENT


def test_a_world_popped_out_of_order_leaves_the_others_active() -> None:
    first, second = ServiceBusWorld(), ServiceBusWorld()
    push(first)
    push(second)
    try:
        pop(first)
        assert active_world() is second
    finally:
        pop(second)
    with pytest.raises(RuntimeError):
        active_world()
