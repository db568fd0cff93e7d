"""Who may do what on localhub: the pure rules, no database."""

from __future__ import annotations

import ipaddress


def loopback_host(host: str) -> bool:
    """Whether a Host header (with or without its port) names this machine's loopback:
    `localhost`, `127.x.x.x` or `[::1]`. A page on another site that a browser sends to
    localhub by rebinding its name to 127.0.0.1 still carries that site's name here."""
    name = host.strip().lower()
    if name.startswith("["):
        name = name[1:].partition("]")[0]
    elif name.count(":") == 1:
        name = name.partition(":")[0]
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False
