"""Resource transforms run under the mock runtime as the Pulumi engine runs them.

Pulumi's mock monitor records transforms and never runs them (`pulumi.runtime.mocks`: "The mock monitor does not
run them"), so a program's `transforms=` option or `pulumi.runtime.register_resource_transform` (the README's
route to `ignore_changes` on a pair's resources) would silently change nothing offline. The engine
(pulumi/pulumi `pkg/resource/deploy/source_eval.go`, `RegisterResource` and `wrapTransformCallback`) runs, before
anything else of a registration: the resource's own transforms, then those of each ancestor up the parent chain,
then the stack's, each one on the previous one's result; it calls each through the program's callbacks server
(`CallbackInvokeRequest` holding a `TransformRequest`), and the response's properties and options replace the
request's. `Transforms` does the same, through the same gRPC callbacks server on the loopback address the SDK
opened, so a transform runs with exactly the arguments it would get from the engine.

What the engine does beyond that and this does not: it upgrades the properties to output values carrying their
dependencies before calling a transform (the mock monitor turns output values off); the property dependencies
are kept as the program sent them, for the properties a transform keeps.
"""

from __future__ import annotations

import threading
from typing import Any

import grpc
from pulumi.runtime.proto import callback_pb2, callback_pb2_grpc, resource_pb2

from pairedbus.plans.urns import ROOT_STACK_TYPE


def _options(request: Any) -> Any:
    """`TransformResourceOptions` of a registration, as the engine builds them from the request."""
    options = resource_pb2.TransformResourceOptions(
        depends_on=list(request.dependencies),
        protect=request.protect,
        ignore_changes=list(request.ignoreChanges),
        replace_on_changes=list(request.replaceOnChanges),
        version=request.version,
        aliases=list(request.aliases),
        provider=request.provider,
        plugin_download_url=request.pluginDownloadURL,
        retain_on_delete=request.retainOnDelete,
        deleted_with=request.deletedWith,
        additional_secret_outputs=list(request.additionalSecretOutputs),
        providers=dict(request.providers),
        plugin_checksums=dict(request.pluginChecksums),
    )
    if request.HasField("customTimeouts"):
        options.custom_timeouts.CopyFrom(request.customTimeouts)
    if request.deleteBeforeReplaceDefined or request.deleteBeforeReplace:
        options.delete_before_replace = request.deleteBeforeReplace
    return options


def _apply(request: Any, properties: Any, options: Any) -> Any:
    """A copy of the registration with the transform's properties and options in place of its own."""
    changed = resource_pb2.RegisterResourceRequest()
    changed.CopyFrom(request)
    changed.object.CopyFrom(properties)
    changed.ClearField("dependencies")
    changed.dependencies.extend(options.depends_on)
    changed.protect = options.protect
    changed.ClearField("ignoreChanges")
    changed.ignoreChanges.extend(options.ignore_changes)
    changed.ClearField("replaceOnChanges")
    changed.replaceOnChanges.extend(options.replace_on_changes)
    changed.version = options.version
    changed.ClearField("aliases")
    changed.aliases.extend(options.aliases)
    changed.provider = options.provider
    changed.pluginDownloadURL = options.plugin_download_url
    changed.retainOnDelete = options.retain_on_delete
    changed.deletedWith = options.deleted_with
    changed.ClearField("additionalSecretOutputs")
    changed.additionalSecretOutputs.extend(options.additional_secret_outputs)
    changed.ClearField("providers")
    changed.providers.update(options.providers)
    if options.HasField("custom_timeouts"):
        changed.customTimeouts.CopyFrom(options.custom_timeouts)
    if options.HasField("delete_before_replace"):
        changed.deleteBeforeReplace = options.delete_before_replace
        changed.deleteBeforeReplaceDefined = True
    kept = set(properties.fields)
    for key in [k for k in changed.propertyDependencies if k not in kept]:
        del changed.propertyDependencies[key]
    return changed


class Transforms:
    """The stack's transforms and each registered resource's own, run on every registration in the engine's
    order. Thread-safe: the SDK registers from executor threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stack: list[Any] = []  # pulumirpc.Callback
        self._own: dict[str, list[Any]] = {}  # URN -> the resource's own transforms
        self._parent: dict[str, str] = {}
        self._channels: dict[str, grpc.Channel] = {}

    def register_stack(self, callback: Any) -> None:
        with self._lock:
            self._stack.append(callback)

    def apply(self, request: Any, urn: str) -> Any:
        """The registration after every transform that applies to it; records the resource's own for its children."""
        with self._lock:
            self._parent[urn] = request.parent
            own = list(request.transforms)
            if own:
                self._own[urn] = own
            chain = list(own)
            cursor = request.parent
            while cursor:
                chain.extend(self._own.get(cursor, ()))
                cursor = self._parent.get(cursor, "")
            chain.extend(self._stack)
        if request.type == ROOT_STACK_TYPE:
            return request
        for callback in chain:
            request = self._run(callback, request)
        return request

    def _run(self, callback: Any, request: Any) -> Any:
        options = _options(request)
        transform = resource_pb2.TransformRequest(
            type=request.type,
            name=request.name,
            custom=request.custom,
            parent=request.parent,
            properties=request.object,
            options=options,
        )
        stub = callback_pb2_grpc.CallbacksStub(self._channel(callback.target))
        reply = stub.Invoke(
            callback_pb2.CallbackInvokeRequest(token=callback.token, request=transform.SerializeToString())
        )
        response = resource_pb2.TransformResponse.FromString(reply.response)
        properties = response.properties if response.HasField("properties") else request.object
        return _apply(request, properties, response.options if response.HasField("options") else options)

    def _channel(self, target: str) -> grpc.Channel:
        with self._lock:
            if target not in self._channels:
                self._channels[target] = grpc.insecure_channel(target)
            return self._channels[target]

    def close(self) -> None:
        with self._lock:
            for channel in self._channels.values():
                channel.close()
            self._channels.clear()
