"""Talking to the forge (GitHub, GitHub Enterprise, or localhub on this machine)."""
