"""Dreams: the second writer of memory. A dream reads the transcript since its cursor and
proposes a consolidation of memory as a pull request whose body says exactly where each
change came from (docs/architecture.md §1, §5.3, §5.4).

    from bot.dream.runner import run_dream
    from bot.dream.events import on_step, dream_closed

    run_dream("memory", "ada", "c1")                 # one dream now (trigger: manual)
    on_step("memory", "ada", "c1")                   # the session, after each assistant step
    dream_closed("memory", "ada", "c1")              # the integrator, when a dream PR closed

Pure parts: cursor, triggers, render, the verbatim planner and the LLM answer parser. The
shell: runner (git, worktree, forge), state (trigger state files), strategies.llm's HTTP call.
Nothing is imported here. What a dream shares with the other writers (the provenance block
its pull request ends with) is in bot/pullrequest/.
"""
