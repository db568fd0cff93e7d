"""`memrepo serve`: the production webhook receiver, and (`--local`) the embedded one-machine stack."""
