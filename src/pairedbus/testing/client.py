"""The fake ServiceBusClient (aio) and its sync twin: they open senders and receivers of their
own kind through the same factory methods (`_sender_class` / `_receiver_class`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import datetime
from typing import Any

from azure.core.async_paging import AsyncItemPaged
from azure.core.paging import ItemPaged
from azure.servicebus.exceptions import ServiceBusError

from pairedbus import sdk
from pairedbus.testing.clock import to_seconds
from pairedbus.testing.faults import make_error
from pairedbus.testing.handler import _Handler, current_world
from pairedbus.testing.link import Wire
from pairedbus.testing.receiver import ServiceBusReceiver, SyncServiceBusReceiver
from pairedbus.testing.sender import ServiceBusSender, SyncServiceBusSender
from pairedbus.testing.world import normalize_fqdn


class ServiceBusClient:
    """Fake `azure.servicebus.aio.ServiceBusClient` bound to the active `ServiceBusWorld`."""

    #: What the factory methods open: the sync twin opens its own kind through the same methods.
    _sender_class: type[ServiceBusSender] = ServiceBusSender
    _receiver_class: type[ServiceBusReceiver] = ServiceBusReceiver

    def __init__(self, fully_qualified_namespace: str, credential: Any, **kwargs: Any) -> None:
        if credential is None:
            raise ValueError("credential is required")
        self._world = kwargs.pop("_world", None) or current_world()
        self.fully_qualified_namespace = normalize_fqdn(fully_qualified_namespace)
        self._credential = credential
        self._entity_name: str | None = kwargs.get("entity_name")
        self._try_timeout: float | None = kwargs.get("try_timeout")
        if self._try_timeout is not None and self._try_timeout <= 0:
            raise ValueError("try_timeout must be greater than 0.")
        self._handlers: list[_Handler] = []
        #: The one AMQP connection all of this client's senders and receivers share.
        self._wire = Wire()
        self._closed = False
        self._fault_error: BaseException | None = None
        self._world._register(self)

    @classmethod
    def from_connection_string(cls, conn_str: str, **kwargs: Any) -> ServiceBusClient:
        props = sdk.parse_connection_string(conn_str)
        if props.entity_path:
            kwargs.setdefault("entity_name", props.entity_path)
        credential = kwargs.pop("credential", None) or _ConnectionStringCredential(props)
        return cls(props.fully_qualified_namespace, credential, **kwargs)

    async def __aenter__(self) -> ServiceBusClient:
        return self

    async def __aexit__(self, *args: Any) -> None:
        await self.close()

    async def close(self) -> None:
        for handler in list(self._handlers):
            await handler.close()
        self._handlers.clear()
        self._closed = True

    def _fault(self, error: Any) -> None:
        for handler in list(self._handlers):
            handler._fault(make_error(error, self.fully_qualified_namespace))
            if isinstance(handler, ServiceBusReceiver):
                handler._lose_locks()
        self._fault_error = error

    def _add(self, handler: Any) -> Any:
        if self._fault_error is not None:
            handler._fault(make_error(self._fault_error, self.fully_qualified_namespace))
        self._handlers.append(handler)
        return handler

    def _check_entity(self, name: str) -> None:
        if self._entity_name and name != self._entity_name:
            raise ValueError(
                "The queue name provided does not match the EntityPath in "
                "the connection string used to construct the ServiceBusClient."
            )

    def get_queue_sender(self, queue_name: str, **kwargs: Any) -> ServiceBusSender:
        self._check_entity(queue_name)
        return self._add(self._sender_class(self, queue_name, **kwargs))

    def get_topic_sender(self, topic_name: str, **kwargs: Any) -> ServiceBusSender:
        self._check_entity(topic_name)
        return self._add(self._sender_class(self, topic_name, **kwargs))

    def get_queue_receiver(self, queue_name: str, **kwargs: Any) -> ServiceBusReceiver:
        self._check_entity(queue_name)
        return self._add(self._receiver_class(self, queue_name, **kwargs))

    def get_subscription_receiver(self, topic_name: str, subscription_name: str, **kwargs: Any) -> ServiceBusReceiver:
        self._check_entity(topic_name)
        return self._add(self._receiver_class(self, topic_name, subscription_name, **kwargs))

    def _session_ids(self, entity_name: str, subscription_name: str | None, state_updated_after: Any) -> list[str]:
        ns = self._world.resolve(self.fully_qualified_namespace)
        self._world.check(self.fully_qualified_namespace, entity_name, "list_sessions")
        entity = ns.receivable(entity_name, subscription_name)
        if not entity.settings.requires_session:
            raise ServiceBusError(
                "It is not possible for an entity that does not require sessions to create a sessionful receiver."
            )
        after = None if state_updated_after is None else to_seconds(state_updated_after)
        return entity.store.session_ids(self._world.clock.time(), after)

    def _check_timeout(self, timeout: float | None) -> None:
        if timeout is not None and timeout <= 0:
            raise ValueError("The timeout must be greater than 0.")

    def list_queue_sessions(
        self, queue_name: str, *, state_updated_after: datetime | None = None, timeout: float | None = None
    ) -> AsyncItemPaged[str]:
        """Session ids with active messages or stored state in a session-enabled queue."""
        self._check_entity(queue_name)
        self._check_timeout(timeout)
        return _async_pages(lambda: self._session_ids(queue_name, None, state_updated_after))

    def list_subscription_sessions(
        self,
        topic_name: str,
        subscription_name: str,
        *,
        state_updated_after: datetime | None = None,
        timeout: float | None = None,
    ) -> AsyncItemPaged[str]:
        """Session ids with active messages or stored state in a session-enabled subscription."""
        self._check_entity(topic_name)
        self._check_timeout(timeout)
        return _async_pages(lambda: self._session_ids(topic_name, subscription_name, state_updated_after))


def _async_pages(fetch: Callable[[], list[str]]) -> AsyncItemPaged[str]:
    """One page, fetched when iteration starts (as the SDK's browser does on the first page)."""

    async def get_next(token: Any) -> list[str]:
        return fetch()

    async def extract(page: list[str]) -> tuple[None, AsyncIterator[str]]:
        async def items() -> AsyncIterator[str]:
            for item in page:
                yield item

        return None, items()

    return AsyncItemPaged(get_next, extract)


class _ConnectionStringCredential:
    """Stands in for the SAS credential a connection string implies."""

    def __init__(self, props: Any) -> None:
        self.key_name = props.shared_access_key_name
        self.key = props.shared_access_key
        self.signature = props.shared_access_signature


def _pages(fetch: Callable[[], list[str]]) -> ItemPaged[str]:
    return ItemPaged(lambda token: fetch(), lambda page: (None, iter(page)))


class SyncServiceBusClient(ServiceBusClient):
    """Fake sync `azure.servicebus.ServiceBusClient`."""

    _sender_class = SyncServiceBusSender
    _receiver_class = SyncServiceBusReceiver

    def __enter__(self) -> SyncServiceBusClient:
        return self

    def __exit__(self, *args: Any) -> None:
        self.close()

    def close(self) -> None:  # type: ignore[override]
        for handler in list(self._handlers):
            handler.close()  # type: ignore[unused-coroutine]
        self._handlers.clear()
        self._closed = True

    def list_queue_sessions(  # type: ignore[override]
        self, queue_name: str, *, state_updated_after: datetime | None = None, timeout: float | None = None
    ) -> ItemPaged[str]:
        self._check_entity(queue_name)
        self._check_timeout(timeout)
        return _pages(lambda: self._session_ids(queue_name, None, state_updated_after))

    def list_subscription_sessions(  # type: ignore[override]
        self,
        topic_name: str,
        subscription_name: str,
        *,
        state_updated_after: datetime | None = None,
        timeout: float | None = None,
    ) -> ItemPaged[str]:
        self._check_entity(topic_name)
        self._check_timeout(timeout)
        return _pages(lambda: self._session_ids(topic_name, subscription_name, state_updated_after))
