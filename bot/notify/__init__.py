"""Telling running agents that memory moved: the head event both sides share (events.py), its
publisher on Redis pub/sub (publisher.py: the receiver and the integrator), and the agents'
follower of the receiver's event stream (follower.py). The package imports none of them, so
the follower never loads Redis, nor the publisher the follower."""
