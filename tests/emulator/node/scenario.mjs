// The unmodified @azure/service-bus against the pairedbus emulator (tests/emulator/test_node_client.py).
//
// Reads the connection string from PAIREDBUS_CONNECTION_STRING; the queues "orders" and
// "sessions" (requires sessions) exist. Runs each step in order and prints one JSON line:
// {"steps": {name: result}, "millis": {name: ms}, "error": null | "step: message"}. A step that throws stops the run
// (later steps depend on earlier ones) and names itself in "error".
import { ServiceBusClient } from "@azure/service-bus";

const WAIT = { maxWaitTimeInMs: 5000 };
const connectionString = process.env.PAIREDBUS_CONNECTION_STRING;
if (!connectionString) {
  console.error("PAIREDBUS_CONNECTION_STRING is not set");
  process.exit(2);
}

const steps = {};
const millis = {};
let error = null;
const client = new ServiceBusClient(connectionString, { retryOptions: { maxRetries: 0, timeoutInMs: 10000 } });

async function step(name, fn) {
  if (error !== null) return;
  const start = Date.now();
  try {
    steps[name] = (await fn()) ?? true;
  } catch (e) {
    error = `${name}: ${e?.code ?? e?.name ?? "Error"}: ${e?.message ?? e}`;
  }
  millis[name] = Date.now() - start;
}

const summary = (m) => ({
  body: m.body,
  messageId: m.messageId ?? null,
  subject: m.subject ?? null,
  applicationProperties: m.applicationProperties ?? {},
  sequenceNumber: m.sequenceNumber?.toNumber() ?? null,
  deliveryCount: m.deliveryCount ?? null,
  hasLockToken: typeof m.lockToken === "string" && m.lockToken.length > 0,
  lockedUntil: m.lockedUntilUtc?.toISOString() ?? null,
  enqueued: m.enqueuedTimeUtc?.toISOString() ?? null,
  sessionId: m.sessionId ?? null,
  deadLetterReason: m.deadLetterReason ?? null,
  deadLetterErrorDescription: m.deadLetterErrorDescription ?? null,
});

async function receiveOne(receiver) {
  const got = await receiver.receiveMessages(1, WAIT);
  if (got.length !== 1) throw new Error(`expected one message, received ${got.length}`);
  return got[0];
}

const sender = client.createSender("orders");
const receiver = client.createReceiver("orders");

await step("send", async () => {
  await sender.sendMessages({
    body: "hello",
    messageId: "m-1",
    subject: "greeting",
    applicationProperties: { n: 7, s: "x" },
  });
  const batch = await sender.createMessageBatch();
  for (const body of ["b1", "b2"]) {
    if (!batch.tryAddMessage({ body, messageId: body })) throw new Error("the batch refused a message");
  }
  await sender.sendMessages(batch);
  return { batch: batch.count };
});

await step("complete", async () => {
  const m = await receiveOne(receiver);
  await receiver.completeMessage(m);
  return summary(m);
});

await step("abandon", async () => {
  const first = await receiveOne(receiver);
  await receiver.abandonMessage(first);
  const again = await receiveOne(receiver);
  await receiver.completeMessage(again);
  return { first: summary(first), again: summary(again) };
});

await step("deadLetter", async () => {
  const m = await receiveOne(receiver);
  await receiver.deadLetterMessage(m, { deadLetterReason: "bad", deadLetterErrorDescription: "it was bad" });
  return summary(m);
});

await step("deadLetterQueue", async () => {
  const dlq = client.createReceiver("orders", { subQueueType: "deadLetter" });
  try {
    const m = await receiveOne(dlq);
    return summary(m);
  } finally {
    await dlq.close();
  }
});

await step("deferThenDeadLetter", async () => {
  // A deferred message is received through $management and can only be settled there.
  await sender.sendMessages({ body: "d1", messageId: "d1" });
  const m = await receiveOne(receiver);
  await receiver.deferMessage(m);
  const [again] = await receiver.receiveDeferredMessages(m.sequenceNumber);
  await receiver.deadLetterMessage(again, { deadLetterReason: "deferred-bad", deadLetterErrorDescription: "by lock token" });
  return { deferred: summary(m), received: summary(again) };
});

await step("completeAfterClose", async () => {
  // Its receiver closed, a message is completed by its lock token through $management.
  await sender.sendMessages({ body: "c1", messageId: "c1" });
  const other = client.createReceiver("orders");
  const m = await receiveOne(other);
  const before = m.lockedUntilUtc.getTime();
  await new Promise((resolve) => setTimeout(resolve, 20));
  const renewed = await other.renewMessageLock(m);
  await other.close();
  await receiver.completeMessage(m);
  return { message: summary(m), renewedLater: renewed.getTime() > before };
});

await step("peekAndReceiveAndDelete", async () => {
  await sender.sendMessages([{ body: "p1" }, { body: "p2" }]);
  const peeked = await receiver.peekMessages(10);
  const deleting = client.createReceiver("orders", { receiveMode: "receiveAndDelete" });
  try {
    const got = await deleting.receiveMessages(2, WAIT);
    return { peeked: peeked.map((m) => m.body), received: got.map((m) => m.body) };
  } finally {
    await deleting.close();
  }
});

await step("schedule", async () => {
  const when = new Date(Date.now() + 3600_000);
  const numbers = await sender.scheduleMessages([{ body: "later-1" }, { body: "later-2" }], when);
  await sender.cancelScheduledMessages(numbers[0]);
  return { sequenceNumbers: numbers.map((n) => n.toNumber()) };
});

await step("sessions", async () => {
  const sessionSender = client.createSender("sessions");
  await sessionSender.sendMessages([
    { body: "s-a", sessionId: "a" },
    { body: "s-b", sessionId: "b" },
  ]);
  await sessionSender.close();
  const named = await client.acceptSession("sessions", "b");
  const m = await receiveOne(named);
  await named.setSessionState("seen");
  const state = await named.getSessionState();
  const lockedUntil = await named.renewSessionLock();
  await named.completeMessage(m);
  await named.close();
  const next = await client.acceptNextSession("sessions", WAIT);
  const n = await receiveOne(next);
  await next.completeMessage(n);
  await next.close();
  return {
    named: { sessionId: named.sessionId, message: summary(m), state: state?.toString() ?? null },
    renewed: lockedUntil instanceof Date,
    next: { sessionId: next.sessionId, message: summary(n) },
  };
});

await step("topic", async () => {
  const topicSender = client.createSender("events");
  await topicSender.sendMessages({ body: "e1", messageId: "e1" });
  await topicSender.close();
  const sub = client.createReceiver("events", "all");
  try {
    const m = await receiveOne(sub);
    await sub.completeMessage(m);
    return summary(m);
  } finally {
    await sub.close();
  }
});

await step("large", async () => {
  // Larger than a frame both ways: the transfer arrives and leaves in several frames.
  const body = "x".repeat(200_000);
  await sender.sendMessages({ body, messageId: "big" });
  const m = await receiveOne(receiver);
  await receiver.completeMessage(m);
  return { length: m.body.length, same: m.body === body };
});

// What the client raises for what the broker says (error code, as ServiceBusError.code names it).
async function codeOf(fn) {
  try {
    await fn();
    return null;
  } catch (e) {
    return e?.code ?? `${e?.name}: ${e?.message}`;
  }
}

await step("errors", async () => {
  const missing = await codeOf(async () => {
    const s = client.createSender("nope");
    try {
      await s.sendMessages({ body: "x" });
    } finally {
      await s.close();
    }
  });
  const wrongKey = await codeOf(async () => {
    const other = new ServiceBusClient(connectionString.replace(/SharedAccessKey=[^;]*/, "SharedAccessKey=wrong"), {
      retryOptions: { maxRetries: 0, timeoutInMs: 10000 },
    });
    try {
      await other.createSender("orders").sendMessages({ body: "x" });
    } finally {
      await other.close();
    }
  });
  const tooLarge = await codeOf(() => sender.sendMessages({ body: "x".repeat(300_000) }));
  const noSession = await codeOf(async () => {
    // The client asks the broker to wait its operation timeout (com.microsoft:timeout on the
    // attach), not maxWaitTimeInMs: a client with a short one.
    const impatient = new ServiceBusClient(connectionString, { retryOptions: { maxRetries: 0, timeoutInMs: 1000 } });
    try {
      const r = await impatient.acceptNextSession("sessions");
      await r.close();
    } finally {
      await impatient.close();
    }
  });
  const cancelTwice = await codeOf(async () => {
    const [n] = await sender.scheduleMessages({ body: "twice" }, new Date(Date.now() + 3600_000));
    await sender.cancelScheduledMessages(n);
    await sender.cancelScheduledMessages(n);
  });
  return { missing, wrongKey, tooLarge, noSession, cancelTwice };
});

await step("close", async () => {
  await receiver.close();
  await sender.close();
  await client.close();
});

console.log(JSON.stringify({ steps, millis, error }));
process.exit(0);
