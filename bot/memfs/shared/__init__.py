"""Shared memories attached to an agent's memory: the record (`.memrepo/shared.yml`, in the
agent's own history, so `git log` says when each was attached and by whom), the rules a name,
an attachment and an address `shared/<NAME>/<path>` follow (`record.py`, pure), and the
projections, one working checkout per attachment (`projection.py`: attach, detach, sync)."""
