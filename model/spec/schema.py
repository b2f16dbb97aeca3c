"""What follows from the declared state schema (model/storage/state.py BROKER_SCHEMA): a crash, the loss of the
controller's channels, quiescence. A model builds one ``Schema`` from its initial broker and its features."""
from __future__ import annotations

from model.storage.state import BROKER_SCHEMA, PENDING_STATE_FIELDS, Broker, State

_make_broker = Broker._make


class Schema:
    def __init__(self, initial_broker: Broker, initial_ext: tuple, pending_ext: tuple[int, ...], quiescent_checks):
        # Memory fields go back to their initial values in a crash; the registration goes.
        self.crash_values = tuple(
            (i, False if f.lifetime == "registration" else initial_broker[i])
            for i, f in enumerate(BROKER_SCHEMA) if f.lifetime in ("memory", "registration")
        )
        self.channels = tuple(i for i, f in enumerate(BROKER_SCHEMA) if f.channel)
        self.pending = tuple(State._fields.index(name) for name in PENDING_STATE_FIELDS)
        self.pending_ext = tuple((i, initial_ext[i]) for i in pending_ext)
        self.quiescent_checks = tuple(quiescent_checks)

    def crashed(self, broker: Broker) -> Broker:
        """What survives a crash or halt: the disk fields. Memory (channels included) is back to its initial
        value and the broker is no longer registered."""
        values = list(broker)
        for i, v in self.crash_values:
            values[i] = v
        return _make_broker(values)

    def without_channels(self, broker: Broker) -> Broker:
        """The broker with its channels to the controller emptied (a controller failover loses them)."""
        if not any(broker[i] for i in self.channels):
            return broker
        values = list(broker)
        for i in self.channels:
            values[i] = ()
        return _make_broker(values)

    def is_quiescent(self, model, state: State) -> bool:
        """No message in any channel, no pending field set, and every feature's own condition holds."""
        for i in self.pending:
            if state[i]:
                return False
        for i, initial in self.pending_ext:
            if state.ext[i] != initial:
                return False
        channels = self.channels
        for broker in state.brokers:
            for i in channels:
                if broker[i]:
                    return False
        return all(check(model, state) for check in self.quiescent_checks)
