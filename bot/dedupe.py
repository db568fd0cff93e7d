"""Webhook delivery de-duplication: GitHub may deliver one event twice (a redelivery, a retry
after a slow answer), and each delivery carries a GUID (X-GitHub-Delivery). The receiver acts
on a GUID once within `ttl` seconds: a SET NX on its key (`delivery_key`), undone when the
delivery could not be handled, so that its redelivery is taken.

A delivery whose first action is an enqueue is remembered inside the enqueue's own script
(bot/queue.py `enqueue_collapsed(..., delivery=(guid, ttl))`), with the same key and value.
"""

from __future__ import annotations

import time

from redis import Redis

from bot.redis_keys import delivery_key


def remember_delivery(redis: Redis, guid: str, ttl: int) -> bool:
    """True the first time `guid` (X-GitHub-Delivery) is seen within `ttl` seconds."""
    return bool(redis.set(delivery_key(guid), str(int(time.time())), nx=True, ex=ttl))


def forget_delivery(redis: Redis, guid: str) -> None:
    """Undo `remember_delivery` when the delivery could not be enqueued, so a redelivery of it
    is not mistaken for a duplicate."""
    redis.delete(delivery_key(guid))
