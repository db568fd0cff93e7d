"""memrepo: agent memory as a git repository that people can review, audit and trust."""

__version__ = "0.1.0"
