"""The memory repository: format, validation, memory tool, prompt compile and sync."""
