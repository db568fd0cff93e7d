"""One module per `memrepo` subcommand; each exposes `register(subparsers)`. `texts` holds what
they and bot/cli.py say."""
