"""Dreams: the second writer of memory. A dream reads the transcript since its cursor and
proposes a consolidation of memory as a pull request whose body says exactly where each
change came from (docs/architecture.md §1, §5.3, §5.4).

    from bot.dream.runner import run_dream
    from bot.dream.events import on_step, dream_closed
    from bot.dream.provenance import parse_provenance

    run_dream("memory", "ada", "c1")                 # one dream now (trigger: manual)
    on_step("memory", "ada", "c1")                   # the session, after each assistant step
    dream_closed("memory", "ada", "c1")              # the integrator, when a dream PR closed
    parse_provenance(pull_request.body)              # the integrator and `memrepo why`

Pure parts: cursor, provenance, triggers, render, the verbatim planner and the LLM answer
parser. The shell: runner (git, worktree, forge), state (trigger state files), strategies.llm's
HTTP call. Nothing is imported here, so reading a provenance block does not load the runner.
"""
