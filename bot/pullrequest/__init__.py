"""Pull requests memory's writers open, below the writers themselves: the contracts a dream,
an agent's edit, the integrator and `memrepo why` share (docs/architecture.md §5.3).

    from bot.pullrequest.provenance import parse_provenance, render_provenance
    from bot.pullrequest.target import forge_target, make_client
    from bot.pullrequest.branch import fetch_base, worktree, push_branch
    from bot.pullrequest.render import safe_text

    parse_provenance(pull_request.body)              # the integrator and `memrepo why`
    client = make_client(forge_target(origin, env))  # the forge the clone's origin is on
    base = fetch_base(repo)                          # origin's main, fetched now
    with worktree(repo, base) as path: ...           # apply a proposal there, then
    push_branch(repo, branch)                        # push its branch (never forced)
    safe_text(summary)                               # outside text, inert in a body

provenance, target and render are pure; branch runs git. The package imports the core and
the forge client, never a writer (dreams, agents, the integrator), so each writer can use it.
Nothing is imported here, so reading a provenance block does not load the forge client.
"""
