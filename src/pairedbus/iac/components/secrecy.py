"""A secret given to a component stays secret in every child that reads it back from another resource.

The Pulumi engine marks a resource's output secret only when the input of the same name was secret (or the
output is listed in `additional_secret_outputs`). So a namespace created with a secret `namespaceName` returns a
plain `name`, and a resource group created with a secret `resourceGroupName` a plain `name`: a child wired to
those outputs (a queue's `namespaceName`, every `resourceGroupName`) would get the secret in clear text, into the
state and the preview. `as_secret_as` keeps the output (its value, and the dependency on its resource) and adds
the secrecy of what the program passed in for it.

ARM ids are not covered: Pulumi never marks an `id` secret, and an id holds the names it is built from.
"""

from typing import Any, TypeVar

import pulumi

T = TypeVar("T")


def as_secret_as(value: pulumi.Output[T], given: pulumi.Input[Any]) -> pulumi.Output[T]:
    """`value` (a resource's output), secret whenever `given` (the input it was created from) is secret; the
    same value and dependencies otherwise. A plain `given` changes nothing."""
    if not isinstance(given, pulumi.Output):
        return value
    return pulumi.Output.all(value, given).apply(lambda both: both[0])
