"""The review queue a person works from in the terminal (`memrepo review`): which open pull
requests are memory's, what each is and what it waits for (`queue`, pure), and the calls to
the forge with the person's own token (`bot.commands.review`)."""
