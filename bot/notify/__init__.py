"""Telling running agents that memory moved: the head event both sides share (events.py), its
publisher on Redis pub/sub (publisher.py: the receiver and the integrator), and the agents'
follower of the receiver's event stream (follower.py), which this package does not load."""

from __future__ import annotations

from bot.notify.events import HeadEvent, channel
from bot.notify.publisher import Subscription, last_head, publish_head, subscribe

__all__ = ["HeadEvent", "Subscription", "channel", "last_head", "publish_head", "subscribe"]
