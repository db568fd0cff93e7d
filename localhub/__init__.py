"""localhub: a local, stateful forge that speaks the part of GitHub's REST API and git
transport memrepo uses, closely enough that PyGithub and git work against it unchanged,
and that misbehaves on request (faults, delivery modes) so error handling can be tested."""
