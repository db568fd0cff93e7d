"""The memory tool: a call parsed (`calls`), planned against HEAD and committed (`memory_tool`), with
its text edits (`edits`) and `memory_apply_patch` (`patch`)."""
