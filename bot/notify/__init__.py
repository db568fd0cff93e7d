"""Telling running agents that memory moved: head events on Redis pub/sub (events.py), and the
agents' side that follows them over the receiver's event stream (subscriber.py)."""

from __future__ import annotations

from bot.notify.events import HeadEvent, Subscription, channel, last_head, publish_head, subscribe

__all__ = ["HeadEvent", "Subscription", "channel", "last_head", "publish_head", "subscribe"]
