"""Provenance: where a line of memory came from (commit -> pull request -> dream -> transcript
messages). It reads the memory core, the forge, the dreams' provenance blocks and the
transcripts, so it lives above all of them (docs/architecture.md §2)."""
