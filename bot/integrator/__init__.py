"""The integrator: validates, resolves and merges memory pull requests. The functional core
(decide, resolve, state) is pure; the shell around it talks to the forge, git and Redis."""
