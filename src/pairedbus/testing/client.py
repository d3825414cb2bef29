"""The fake ServiceBusClient (aio) and its sync twin, on one core (`ClientCore`): each twin opens
senders and receivers of its own kind and pages session ids its own way."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import datetime
from typing import Any, Self, TypeVar

from azure.core.async_paging import AsyncItemPaged
from azure.core.paging import ItemPaged

from pairedbus import sdk
from pairedbus.servicebus.clock import to_seconds
from pairedbus.servicebus.errors import sessions_not_supported
from pairedbus.servicebus.link import Wire
from pairedbus.servicebus.world import ServiceBusWorld, normalize_fqdn
from pairedbus.testing.errors import make_error, raises_sdk_errors, translating
from pairedbus.testing.handler import HandlerCore, current_world
from pairedbus.testing.receiver import ReceiverCore, ServiceBusReceiver, SyncServiceBusReceiver
from pairedbus.testing.sender import ServiceBusSender, SyncServiceBusSender

_Handler = TypeVar("_Handler", bound=HandlerCore)


class ConnectionStringCredential:
    """Stands in for the SAS credential a connection string implies."""

    def __init__(self, props: Any) -> None:
        self.key_name = props.shared_access_key_name
        self.key = props.shared_access_key
        self.signature = props.shared_access_signature


class ClientCore:
    """One connection to a namespace of the active world, and the handlers opened on it."""

    def __init__(self, fully_qualified_namespace: str, credential: Any, **kwargs: Any) -> None:
        if credential is None:
            raise ValueError("credential is required")
        self.world: ServiceBusWorld = kwargs.pop("_world", None) or current_world()
        self.fully_qualified_namespace = normalize_fqdn(fully_qualified_namespace)
        self._credential = credential
        self._entity_name: str | None = kwargs.get("entity_name")
        self.try_timeout: float | None = kwargs.get("try_timeout")
        if self.try_timeout is not None and self.try_timeout <= 0:
            raise ValueError("try_timeout must be greater than 0.")
        self._handlers: list[HandlerCore] = []
        #: The one AMQP connection all of this client's senders and receivers share.
        self.wire = Wire()
        self._closed = False
        self._fault_error: BaseException | None = None
        self.world.register(self)

    @classmethod
    def from_connection_string(cls, conn_str: str, **kwargs: Any) -> Self:
        props = sdk.parse_connection_string(conn_str)
        if props.entity_path:
            kwargs.setdefault("entity_name", props.entity_path)
        credential = kwargs.pop("credential", None) or ConnectionStringCredential(props)
        return cls(props.fully_qualified_namespace, credential, **kwargs)

    @property
    def closed(self) -> bool:
        """Whether `close` ran (the world faults only open clients)."""
        return self._closed

    def inject_fault(self, error: Any) -> None:
        """The connection dropped: every handler raises `error` from now on and loses its locks."""
        for handler in list(self._handlers):
            handler.inject_fault(make_error(error, self.fully_qualified_namespace))
            if isinstance(handler, ReceiverCore):
                handler.lose_locks()
        self._fault_error = error

    def _shut_down(self) -> None:
        for handler in list(self._handlers):
            handler.shut()
        self._handlers.clear()
        self._closed = True

    def _add(self, handler: _Handler) -> _Handler:
        if self._fault_error is not None:
            handler.inject_fault(make_error(self._fault_error, self.fully_qualified_namespace))
        self._handlers.append(handler)
        return handler

    def _check_entity(self, name: str) -> None:
        if self._entity_name and name != self._entity_name:
            raise ValueError(
                "The queue name provided does not match the EntityPath in "
                "the connection string used to construct the ServiceBusClient."
            )

    def _session_ids(self, entity_name: str, subscription_name: str | None, state_updated_after: Any) -> list[str]:
        ns = self.world.resolve(self.fully_qualified_namespace)
        self.world.check(self.fully_qualified_namespace, entity_name, "list_sessions")
        entity = ns.receivable(entity_name, subscription_name)
        if not entity.settings.requires_session:
            raise sessions_not_supported()
        after = None if state_updated_after is None else to_seconds(state_updated_after)
        return entity.store.session_ids(self.world.clock.time(), after)

    def _session_lister(
        self, entity_name: str, subscription_name: str | None, state_updated_after: Any, timeout: float | None
    ) -> Callable[[], list[str]]:
        self._check_entity(entity_name)
        if timeout is not None and timeout <= 0:
            raise ValueError("The timeout must be greater than 0.")
        # fetched when the caller iterates, after the public method returned
        return translating(lambda: self._session_ids(entity_name, subscription_name, state_updated_after))


@raises_sdk_errors
class ServiceBusClient(ClientCore):
    """Fake `azure.servicebus.aio.ServiceBusClient` bound to the active `ServiceBusWorld`."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *args: Any) -> None:
        await self.close()

    async def close(self) -> None:
        self._shut_down()

    def get_queue_sender(self, queue_name: str, **kwargs: Any) -> ServiceBusSender:
        self._check_entity(queue_name)
        return self._add(ServiceBusSender(self, queue_name, **kwargs))

    def get_topic_sender(self, topic_name: str, **kwargs: Any) -> ServiceBusSender:
        self._check_entity(topic_name)
        return self._add(ServiceBusSender(self, topic_name, **kwargs))

    def get_queue_receiver(self, queue_name: str, **kwargs: Any) -> ServiceBusReceiver:
        self._check_entity(queue_name)
        return self._add(ServiceBusReceiver(self, queue_name, **kwargs))

    def get_subscription_receiver(self, topic_name: str, subscription_name: str, **kwargs: Any) -> ServiceBusReceiver:
        self._check_entity(topic_name)
        return self._add(ServiceBusReceiver(self, topic_name, subscription_name, **kwargs))

    def list_queue_sessions(
        self, queue_name: str, *, state_updated_after: datetime | None = None, timeout: float | None = None
    ) -> AsyncItemPaged[str]:
        """Session ids with active messages or stored state in a session-enabled queue."""
        return _async_pages(self._session_lister(queue_name, None, state_updated_after, timeout))

    def list_subscription_sessions(
        self,
        topic_name: str,
        subscription_name: str,
        *,
        state_updated_after: datetime | None = None,
        timeout: float | None = None,
    ) -> AsyncItemPaged[str]:
        """Session ids with active messages or stored state in a session-enabled subscription."""
        return _async_pages(self._session_lister(topic_name, subscription_name, state_updated_after, timeout))


@raises_sdk_errors
class SyncServiceBusClient(ClientCore):
    """Fake sync `azure.servicebus.ServiceBusClient`."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *args: Any) -> None:
        self.close()

    def close(self) -> None:
        self._shut_down()

    def get_queue_sender(self, queue_name: str, **kwargs: Any) -> SyncServiceBusSender:
        self._check_entity(queue_name)
        return self._add(SyncServiceBusSender(self, queue_name, **kwargs))

    def get_topic_sender(self, topic_name: str, **kwargs: Any) -> SyncServiceBusSender:
        self._check_entity(topic_name)
        return self._add(SyncServiceBusSender(self, topic_name, **kwargs))

    def get_queue_receiver(self, queue_name: str, **kwargs: Any) -> SyncServiceBusReceiver:
        self._check_entity(queue_name)
        return self._add(SyncServiceBusReceiver(self, queue_name, **kwargs))

    def get_subscription_receiver(
        self, topic_name: str, subscription_name: str, **kwargs: Any
    ) -> SyncServiceBusReceiver:
        self._check_entity(topic_name)
        return self._add(SyncServiceBusReceiver(self, topic_name, subscription_name, **kwargs))

    def list_queue_sessions(
        self, queue_name: str, *, state_updated_after: datetime | None = None, timeout: float | None = None
    ) -> ItemPaged[str]:
        return _pages(self._session_lister(queue_name, None, state_updated_after, timeout))

    def list_subscription_sessions(
        self,
        topic_name: str,
        subscription_name: str,
        *,
        state_updated_after: datetime | None = None,
        timeout: float | None = None,
    ) -> ItemPaged[str]:
        return _pages(self._session_lister(topic_name, subscription_name, state_updated_after, timeout))


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


def _pages(fetch: Callable[[], list[str]]) -> ItemPaged[str]:
    return ItemPaged(lambda token: fetch(), lambda page: (None, iter(page)))
