"""A send that reached the drill's caller is described by what raised it and on which hop."""

from __future__ import annotations

import logging

from azure.servicebus._pyamqp.error import AMQPLinkError, ErrorCondition
from azure.servicebus._transport._pyamqp_transport import PyamqpTransport
from azure.servicebus.exceptions import ServiceBusConnectionError, ServiceBusError

from pairedbus.drill.failures import SendFailure
from pairedbus.drill.ledger import Ledger
from pairedbus.sender.errors import BACKLOG_HOP_NOTE


def test_a_primary_refusal_keeps_its_condition_and_retryable_flag():
    exc = PyamqpTransport.create_servicebus_exception(
        logging.getLogger("test"), AMQPLinkError(ErrorCondition.LinkDetachForced)
    )
    failure = SendFailure.of(exc)
    assert (failure.hop, failure.condition, failure.retryable) == ("primary", "amqp:link:detach-forced", True)
    assert failure.kind == "primary: ServiceBusConnectionError [amqp:link:detach-forced] retryable=true"


def test_a_backlog_failure_is_named_by_the_sender_s_note_and_its_cause():
    exc = ServiceBusConnectionError(message="the secondary went away")
    exc.__cause__ = ServiceBusError("Handler failed")
    exc.add_note(BACKLOG_HOP_NOTE)
    failure = SendFailure.of(exc)
    assert failure.kind == "backlog: ServiceBusConnectionError <- ServiceBusError retryable=true"


def test_the_ledger_counts_failed_messages_by_kind():
    ledger = Ledger()
    ledger.send_failed(3, ServiceBusError("Handler failed"))
    ledger.send_failed(1, ServiceBusError("Handler failed again"))
    assert ledger.send_failures == 4
    assert dict(ledger.send_failures_by_error) == {"primary: ServiceBusError retryable=false": 4}
    assert [f.message for f in ledger.send_failure_examples] == ["Handler failed", "Handler failed again"]
