"""Azure's limits on a queue's, topic's or subscription's properties: the stack config, the fake and
the drill all check against these (Azure's numbers, not the spec's; those stay in `contract`).

Sources:
- [admin] azure-sdk-for-net, `sdk/servicebus/Azure.Messaging.ServiceBus/src/Administration/
  AdministrationClientConstants.cs`: the .NET administration client's own validation.
- [arm-sb] azure-rest-api-specs, `specification/servicebus/resource-manager/Microsoft.ServiceBus/
  stable/2024-01-01/openapi.json`, and the `azure.mgmt.servicebus` model docstrings generated from it.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Final

from pairedbus import contract

#: [admin] MinimumAllowedTimeToLive = 1 s; MaximumAllowedTimeToLive = TimeSpan.MaxValue.
MIN_TIME_TO_LIVE: Final = timedelta(seconds=1)
#: [admin] MinimumLockDuration = 5 s, MaximumLockDuration = 5 min ([arm-sb]: "The maximum value
#: for LockDuration is 5 minutes").
MIN_LOCK_DURATION: Final = timedelta(seconds=5)
MAX_LOCK_DURATION: Final = timedelta(minutes=5)
#: [admin] MinimumAllowedAutoDeleteOnIdle = 5 min ([arm-sb]: "The minimum duration is 5 minutes").
MIN_AUTO_DELETE_ON_IDLE: Final = timedelta(minutes=5)
#: [admin] Minimum/MaximumDuplicateDetectionHistoryTimeWindow = 20 s / 7 days.
MIN_DUPLICATE_DETECTION_WINDOW: Final = timedelta(seconds=20)
MAX_DUPLICATE_DETECTION_WINDOW: Final = timedelta(days=7)
#: [admin] MinAllowedMaxDeliveryCount = 1; the wire type is a .NET int32.
MIN_MAX_DELIVERY_COUNT: Final = 1
MAX_MAX_DELIVERY_COUNT: Final = contract.INT32_MAX
