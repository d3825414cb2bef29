"""What the failover sender and the syphon share: the close/fault rule of a connection pair
(`connections`), park/restore of a message in a backlog queue (`aliasing`), pings (`ping`) and the
receive helpers that keep pings from application code (`receive`)."""
