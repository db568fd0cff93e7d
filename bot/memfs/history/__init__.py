"""Time travel over main: what memory held at a moment (`travel`), main's timeline, and blame."""
