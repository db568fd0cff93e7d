"""What `memrepo review` says: its refusals (one line each, with the exit code documented in
bot/commands/texts.py's REVIEW_EXIT_CODES) and the words of its list."""







# Refusals.
NO_TOKEN = ("no forge token for the person reviewing {repository}: set MEMREPO_REVIEW_TOKEN (or "
            "GITHUB_TOKEN) to your own token, not the agent's")


