"""One module per `memrepo` subcommand; each exposes `register(subparsers)`."""
