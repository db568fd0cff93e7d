"""Pull requests memory's writers open, below the writers themselves: the contracts a dream,
an agent's edit, the integrator and `memrepo why` share (docs/architecture.md §5.3).

    from bot.pullrequest.provenance import parse_provenance, render_provenance
    from bot.pullrequest.target import forge_target, make_client

    parse_provenance(pull_request.body)              # the integrator and `memrepo why`
    client = make_client(forge_target(origin, env))  # the forge the clone's origin is on

The package imports the core and the forge client, never a writer (dreams, agents, the
integrator), so each writer can use it. Nothing is imported here, so reading a provenance
block does not load the forge client.
"""
