"""The ARM plane of the fake: `azure-mgmt-servicebus` served from the same world as the data plane.

Like moto, the fake answers at the HTTP boundary: `mock_servicebus()` swaps
`azure.mgmt.servicebus[.aio].ServiceBusManagementClient` for subclasses of the real clients whose
transport is a `requests` adapter answering ARM's REST paths from the world. So paging, the
long-running-operation poller, model deserialization and error mapping are the real SDK's own,
and an entity created through one plane is seen through the other. Served: namespaces (list,
list by resource group, get, create or update, delete, list keys of a namespace authorization
rule), queues, topics and subscriptions (list, get, create or update, delete), with ARM's `~` for
the `/` of entity names, `countDetails`, and ARM's error bodies (`ResourceNotFound` for a missing
namespace, `NotFound` for a missing entity, `BadRequest` for refused properties), which the SDK
raises as `ResourceNotFoundError` / `HttpResponseError` with `error.code` set.

Built like a moto backend: this module is the transport and the clients; arm_routes.py maps
each URL to its handler, which works on the world (the models); arm_responses.py makes ARM's
JSON and error bodies.
"""

from __future__ import annotations

import io
import json
import time
import weakref
from http import HTTPStatus
from typing import Any, Self

import requests
from azure.core.credentials import AccessToken
from azure.core.pipeline.transport import AsyncioRequestsTransport, RequestsTransport
from azure.mgmt.servicebus import ServiceBusManagementClient as _RealClient
from azure.mgmt.servicebus.aio import ServiceBusManagementClient as _RealAsyncClient
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict
from urllib3.response import HTTPResponse

from pairedbus.servicebus.world import ServiceBusWorld
from pairedbus.testing.active import active_world
from pairedbus.testing.arm_responses import (
    DEFAULT_LOCATION,
    DEFAULT_RESOURCE_GROUP,
    DEFAULT_SUBSCRIPTION_ID,
    arm_identity,
    namespace_id,
)
from pairedbus.testing.arm_routes import ArmRoutes

__all__ = [
    "DEFAULT_LOCATION",
    "DEFAULT_RESOURCE_GROUP",
    "DEFAULT_SUBSCRIPTION_ID",
    "AsyncServiceBusManagementClient",
    "ServiceBusManagementClient",
    "WorldAdapter",
    "arm_identity",
    "namespace_id",
    "replacements",
]

#: One ARM surface per world, for every management client the world answers.
_ROUTES: weakref.WeakKeyDictionary[ServiceBusWorld, ArmRoutes] = weakref.WeakKeyDictionary()


# --- the transport -----------------------------------------------------------------------------


class WorldAdapter(BaseAdapter):
    """A `requests` adapter that answers every request from the world: nothing leaves the process."""

    def __init__(self, routes: ArmRoutes) -> None:
        super().__init__()
        self.routes = routes
        self.requests: list[tuple[str, str]] = []  # (method, url) as ARM would see them

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: Any = None,
        verify: bool | str = True,
        cert: Any = None,
        proxies: Any = None,
    ) -> requests.Response:
        method, url = request.method or "GET", request.url or ""
        self.requests.append((method, url))
        body = request.body if isinstance(request.body, (str, bytes)) else None  # ARM bodies are JSON text
        status, payload = self.routes.handle(method, url, body)
        content = b"" if payload is None else json.dumps(payload).encode()
        headers = {"Content-Type": "application/json; charset=utf-8", "x-ms-request-id": f"fake-{len(self.requests)}"}
        response = requests.Response()
        response.status_code = status
        response.reason = HTTPStatus(status).phrase
        response.raw = HTTPResponse(
            body=io.BytesIO(content), headers=headers, status=status, reason=response.reason, preload_content=False
        )
        response.headers = CaseInsensitiveDict(headers)
        response.url = url
        response.request = request
        response.encoding = "utf-8"
        return response

    def close(self) -> None:
        pass


def _session(world: ServiceBusWorld) -> requests.Session:
    session = requests.Session()
    adapter = WorldAdapter(_routes(world))
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    return session


def _routes(world: ServiceBusWorld) -> ArmRoutes:
    routes = _ROUTES.get(world)
    if routes is None:
        routes = _ROUTES[world] = ArmRoutes(world)
    return routes


class _TokenCore:
    """The ARM clients' credential under the fake: a token that never leaves the process."""

    def __init__(self, credential: Any) -> None:
        self.wrapped = credential  # kept for inspection; never asked for a token

    def _token(self) -> AccessToken:
        return AccessToken("fake-arm-token", int(time.time()) + 3600)


class _Token(_TokenCore):
    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        return self._token()

    def close(self) -> None:
        pass


class _AsyncToken(_TokenCore):
    async def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        return self._token()

    async def close(self) -> None:
        pass

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *args: Any) -> None:
        await self.close()


def _world_from(kwargs: dict[str, Any]) -> ServiceBusWorld:
    return kwargs.pop("_world", None) or active_world()


class ServiceBusManagementClient(_RealClient):
    """The real `azure.mgmt.servicebus.ServiceBusManagementClient`, answered by the active world."""

    def __init__(self, credential: Any, subscription_id: str, base_url: str | None = None, **kwargs: Any) -> None:
        world = _world_from(kwargs)
        kwargs["transport"] = RequestsTransport(session=_session(world), session_owner=True)
        super().__init__(_Token(credential), subscription_id, base_url, **kwargs)


class AsyncServiceBusManagementClient(_RealAsyncClient):
    """The real `azure.mgmt.servicebus.aio.ServiceBusManagementClient`, answered by the world
    (requests run on the transport's worker threads; the world is guarded by a lock)."""

    def __init__(self, credential: Any, subscription_id: str, base_url: str | None = None, **kwargs: Any) -> None:
        world = _world_from(kwargs)
        kwargs["transport"] = AsyncioRequestsTransport(session=_session(world), session_owner=True)
        super().__init__(_AsyncToken(credential), subscription_id, base_url, **kwargs)


#: For `patching`: real class -> fake class.
def replacements() -> list[tuple[type, type]]:
    return [(_RealClient, ServiceBusManagementClient), (_RealAsyncClient, AsyncServiceBusManagementClient)]
